//! The server side of the extension UI subprotocol: requests carry fresh ids, replies are
//! matched by id, timeouts and aborts fall back to defaults, unknown ids are ignored.
//! Timeouts run on tokio's paused clock, advanced explicitly.

use std::time::Duration;

use knightcode_headless::rpc::framing::LineReader;
use knightcode_headless::rpc::framing::spawn_writer;
use knightcode_headless::rpc::ui_bridge::DialogOptions;
use knightcode_headless::rpc::ui_bridge::UiBridge;
use knightcode_protocol::rpc::ExtensionUiRequest;
use knightcode_protocol::rpc::ExtensionUiResponse;
use knightcode_protocol::rpc::NotifyType;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use knightcode_protocol::rpc::WidgetPlacement;
use tokio::io::DuplexStream;
use tokio_util::sync::CancellationToken;

/// A bridge writing into a pipe, and the client's end of that pipe.
fn bridge() -> (UiBridge, LineReader<DuplexStream>) {
    let (write_end, read_end) = tokio::io::duplex(1 << 16);
    let (writer, _task) = spawn_writer(write_end, 16);
    (UiBridge::new(writer), LineReader::new(read_end))
}

async fn next_request(client: &mut LineReader<DuplexStream>) -> (ExtensionUiRequest, String) {
    let line = client.next_line().await.unwrap().expect("a request line");
    (serde_json::from_str(&line).unwrap(), line)
}

fn reply(request: &ExtensionUiRequest, reply: UiReply) -> ExtensionUiResponse {
    ExtensionUiResponse::new(request.id.clone(), reply)
}

#[tokio::test]
async fn a_reply_resolves_the_dialog_with_the_same_id() {
    let (bridge, mut client) = bridge();
    let asking = bridge.clone();
    let answer = tokio::spawn(async move {
        asking
            .confirm(
                "Clear session?",
                "All messages will be lost.",
                &DialogOptions::default(),
            )
            .await
    });
    let (request, line) = next_request(&mut client).await;
    assert!(
        line.starts_with(r#"{"type":"extension_ui_request","id":""#),
        "{line}"
    );
    assert!(line.ends_with(r#","method":"confirm","title":"Clear session?","message":"All messages will be lost."}"#), "{line}");
    assert_eq!(request.id.len(), 36, "a uuid");
    assert_eq!(bridge.pending_count(), 1);
    assert!(bridge.resolve(reply(&request, UiReply::Confirmed(true))));
    assert!(answer.await.unwrap());
    assert_eq!(bridge.pending_count(), 0);
    // A second reply to the same id is ignored.
    assert!(!bridge.resolve(reply(&request, UiReply::Confirmed(false))));
}

#[tokio::test(start_paused = true)]
async fn a_timeout_resolves_with_the_default_and_is_written() {
    let (bridge, mut client) = bridge();
    let asking = bridge.clone();
    let answer = tokio::spawn(async move {
        let options = vec!["Allow".to_owned(), "Block".to_owned()];
        asking
            .select(
                "Allow dangerous command?",
                options,
                &DialogOptions::timeout(Duration::from_secs(10)),
            )
            .await
    });
    let (request, line) = next_request(&mut client).await;
    assert!(
        line.ends_with(r#""options":["Allow","Block"],"timeout":10000}"#),
        "{line}"
    );
    tokio::time::advance(Duration::from_millis(9_999)).await;
    assert!(!answer.is_finished());
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(answer.await.unwrap(), None);
    assert_eq!(bridge.pending_count(), 0);
    // The late reply finds nobody.
    assert!(!bridge.resolve(reply(&request, UiReply::Value("Allow".into()))));
}

#[tokio::test(start_paused = true)]
async fn editor_has_no_wire_timeout_but_a_local_one_still_ends_it() {
    let (bridge, mut client) = bridge();
    let asking = bridge.clone();
    let answer = tokio::spawn(async move {
        asking
            .editor(
                "Edit",
                Some("a\nb".into()),
                &DialogOptions::timeout(Duration::from_secs(3)),
            )
            .await
    });
    let (_, line) = next_request(&mut client).await;
    assert!(
        line.ends_with(r#""method":"editor","title":"Edit","prefill":"a\nb"}"#),
        "{line}"
    );
    tokio::time::advance(Duration::from_secs(3)).await;
    assert_eq!(answer.await.unwrap(), None);
}

#[tokio::test]
async fn unknown_ids_are_ignored() {
    let (bridge, mut client) = bridge();
    let asking = bridge.clone();
    let answer = tokio::spawn(async move {
        asking
            .input(
                "Name?",
                Some("type something...".into()),
                &DialogOptions::default(),
            )
            .await
    });
    let (request, _) = next_request(&mut client).await;
    assert!(!bridge.resolve(ExtensionUiResponse::new(
        "not-a-request",
        UiReply::Value("x".into())
    )));
    assert!(!bridge.resolve(ExtensionUiResponse::new("", UiReply::Cancelled)));
    assert_eq!(bridge.pending_count(), 1);
    assert!(bridge.resolve(reply(&request, UiReply::Value("Ada".into()))));
    assert_eq!(answer.await.unwrap().as_deref(), Some("Ada"));
}

#[tokio::test]
async fn concurrent_dialogs_each_get_their_own_reply() {
    let (bridge, mut client) = bridge();
    let mut answers = Vec::new();
    for n in 0..3 {
        let asking = bridge.clone();
        answers.push(tokio::spawn(async move {
            asking
                .input(format!("question {n}"), None, &DialogOptions::default())
                .await
        }));
    }
    let mut requests = Vec::new();
    for _ in 0..3 {
        requests.push(next_request(&mut client).await.0);
    }
    let mut ids: Vec<_> = requests.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "fresh ids");
    // Answer in reverse order, each with its own question's title.
    for request in requests.iter().rev() {
        let UiRequestKind::Input { title, .. } = &request.kind else {
            panic!("not an input");
        };
        assert!(bridge.resolve(reply(request, UiReply::Value(format!("answer to {title}")))));
    }
    for (n, answer) in answers.into_iter().enumerate() {
        assert_eq!(
            answer.await.unwrap(),
            Some(format!("answer to question {n}"))
        );
    }
}

#[tokio::test]
async fn abort_resolves_with_the_default() {
    let (bridge, mut client) = bridge();
    let signal = CancellationToken::new();
    let options = DialogOptions {
        timeout: None,
        signal: Some(signal.clone()),
    };
    let asking = bridge.clone();
    let dialog_options = options.clone();
    let answer =
        tokio::spawn(async move { asking.confirm("Go?", "Really?", &dialog_options).await });
    let (request, _) = next_request(&mut client).await;
    signal.cancel();
    assert!(!answer.await.unwrap());
    assert_eq!(bridge.pending_count(), 0);
    assert!(!bridge.resolve(reply(&request, UiReply::Confirmed(true))));
    // Already aborted: nothing is written at all.
    assert!(!bridge.confirm("Go?", "Again?", &options).await);
    bridge.set_title("next").await.unwrap();
    let (request, _) = next_request(&mut client).await;
    assert_eq!(
        request.kind,
        UiRequestKind::SetTitle {
            title: "next".into()
        }
    );
}

#[tokio::test]
async fn replies_of_the_wrong_kind_read_as_the_default() {
    let (bridge, mut client) = bridge();
    let asking = bridge.clone();
    let confirm =
        tokio::spawn(async move { asking.confirm("t", "m", &DialogOptions::default()).await });
    let (request, _) = next_request(&mut client).await;
    bridge.resolve(reply(&request, UiReply::Value("yes".into())));
    assert!(!confirm.await.unwrap());

    let asking = bridge.clone();
    let select = tokio::spawn(async move {
        asking
            .select("t", vec!["a".into()], &DialogOptions::default())
            .await
    });
    let (request, _) = next_request(&mut client).await;
    bridge.resolve(reply(&request, UiReply::Confirmed(true)));
    assert_eq!(select.await.unwrap(), None);

    let asking = bridge.clone();
    let input =
        tokio::spawn(async move { asking.input("t", None, &DialogOptions::default()).await });
    let (request, _) = next_request(&mut client).await;
    bridge.resolve(reply(&request, UiReply::Cancelled));
    assert_eq!(input.await.unwrap(), None);
}

#[tokio::test]
async fn fire_and_forget_requests_need_no_reply() {
    let (bridge, mut client) = bridge();
    bridge
        .notify("Command blocked", Some(NotifyType::Warning))
        .await
        .unwrap();
    bridge
        .set_status("my-ext", Some("Turn 3".into()))
        .await
        .unwrap();
    bridge.set_status("my-ext", None).await.unwrap();
    bridge
        .set_widget(
            "w",
            Some(vec!["line".into()]),
            Some(WidgetPlacement::AboveEditor),
        )
        .await
        .unwrap();
    bridge.set_title("knightcode").await.unwrap();
    bridge.set_editor_text("draft").await.unwrap();
    let request = UiRequestKind::Notify {
        message: "via request".into(),
        notify_type: None,
    };
    assert_eq!(
        bridge.request(request, &DialogOptions::default()).await,
        None
    );
    assert_eq!(bridge.pending_count(), 0);
    let mut tails = Vec::new();
    for _ in 0..7 {
        let (request, line) = next_request(&mut client).await;
        assert!(!request.kind.expects_response());
        tails.push(line[line.find(r#""method""#).unwrap()..].to_owned());
    }
    assert_eq!(
        tails,
        [
            r#""method":"notify","message":"Command blocked","notifyType":"warning"}"#,
            r#""method":"setStatus","statusKey":"my-ext","statusText":"Turn 3"}"#,
            r#""method":"setStatus","statusKey":"my-ext"}"#,
            r#""method":"setWidget","widgetKey":"w","widgetLines":["line"],"widgetPlacement":"aboveEditor"}"#,
            r#""method":"setTitle","title":"knightcode"}"#,
            r#""method":"set_editor_text","text":"draft"}"#,
            r#""method":"notify","message":"via request"}"#,
        ]
    );
}

#[tokio::test]
async fn cancel_all_releases_every_waiting_dialog() {
    let (bridge, mut client) = bridge();
    let asking = bridge.clone();
    let select = tokio::spawn(async move {
        asking
            .select("t", vec!["a".into()], &DialogOptions::default())
            .await
    });
    let asking = bridge.clone();
    let confirm =
        tokio::spawn(async move { asking.confirm("t", "m", &DialogOptions::default()).await });
    next_request(&mut client).await;
    next_request(&mut client).await;
    bridge.cancel_all();
    assert_eq!(select.await.unwrap(), None);
    assert!(!confirm.await.unwrap());
}

#[tokio::test]
async fn a_closed_output_resolves_dialogs_at_once() {
    let (write_end, _read_end) = tokio::io::duplex(64);
    let (writer, task) = spawn_writer(write_end, 1);
    let bridge = UiBridge::new(writer);
    task.close().await.unwrap();
    assert!(!bridge.confirm("t", "m", &DialogOptions::default()).await);
    assert_eq!(bridge.pending_count(), 0);
    assert!(bridge.notify("gone", None).await.is_err());
}

#[tokio::test]
async fn close_releases_waiting_dialogs_and_answers_later_ones_at_once() {
    let (bridge, mut client) = bridge();
    let asking = bridge.clone();
    let select = tokio::spawn(async move {
        asking
            .select("t", vec!["a".into()], &DialogOptions::default())
            .await
    });
    next_request(&mut client).await;
    bridge.close();
    assert_eq!(select.await.unwrap(), None);
    // After the input ended no reply can come: nothing waits.
    assert!(!bridge.confirm("t", "m", &DialogOptions::default()).await);
    assert_eq!(bridge.pending_count(), 0);
}
