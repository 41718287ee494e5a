//! The warmer's timer and refreshes: a task beside the session actor, started and stopped
//! by it. A refresh asks the extensions (`cache_warming_decision`), replays the request
//! and hands a successful refresh's usage to the actor to record.

use std::sync::Arc;

use knightcode_ai::Provider;
use knightcode_ext::ExtensionHost;
use knightcode_protocol::StopReason;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Action;
use super::CacheWarmUsage;
use super::CacheWarming;
use super::Decision;
use crate::actor::Command;
use crate::actor::Envelope;
use crate::actor::Responder;

/// What a refresh needs besides the warmer.
pub(crate) struct Refresher {
    pub(crate) warming: CacheWarming,
    /// The provider under the agent's: a warm request must not restart warming.
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) host: Option<Arc<ExtensionHost>>,
    /// The actor's inbox, weakly: the warmer must not keep a session alive.
    pub(crate) inbox: mpsc::WeakUnboundedSender<Envelope>,
}

/// Runs until `stop`: waits for the timed refresh (or a change of plan) and sends it.
pub(crate) async fn drive(refresher: Refresher, stop: CancellationToken) {
    let mut changed = refresher.warming.subscribe();
    loop {
        changed.borrow_and_update();
        let due = refresher.warming.due();
        let clock = Arc::clone(refresher.warming.clock());
        let timer = async move {
            match due {
                Some((_, wait)) => clock.sleep(wait).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stop.cancelled() => return,
            result = changed.changed() => {
                if result.is_err() {
                    return;
                }
            }
            () = timer => {
                if let Some((generation, _)) = due {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = refresh(&refresher, generation) => {}
                    }
                }
            }
        }
    }
}

/// The extensions' word on `decision`: the last handler that returns an action wins; none,
/// or a failure (reported as the extension's error), leaves the warmer's own.
async fn decide(host: Option<&Arc<ExtensionHost>>, decision: &Decision) -> Action {
    let Some(host) = host else {
        return decision.action;
    };
    let payload = json!({
        "warmCost": decision.warm_cost,
        "missCost": decision.miss_cost,
        "continuationProbability": decision.continuation_probability,
        "action": decision.action.as_str(),
    });
    host.dispatch("cache_warming_decision", payload)
        .await
        .and_then(|result| result.get("action")?.as_str().and_then(Action::parse))
        .unwrap_or(decision.action)
}

async fn refresh(refresher: &Refresher, generation: u64) {
    let warming = &refresher.warming;
    let Some(plan) = warming.begin_refresh(generation) else {
        return;
    };
    let action = decide(refresher.host.as_ref(), &plan.decision).await;
    let Some((request, cancel, overridden)) = warming.confirm(&plan, action) else {
        return;
    };
    // Best effort: a failed refresh records nothing and the next one is timed as usual.
    let message = refresher.provider.stream(&request, cancel).result().await;
    let succeeded = !matches!(
        message.stop_reason.known(),
        Some(StopReason::Error | StopReason::Aborted)
    );
    if succeeded
        && warming.is_current(generation)
        && let Some(inbox) = refresher.inbox.upgrade()
    {
        let usage = CacheWarmUsage {
            model: message.response_model.unwrap_or(message.model),
            provider: message.provider,
            usage: message.usage,
            note: overridden.then(|| "extension override".to_owned()),
        };
        let _ = inbox.send(Envelope {
            command: Command::RecordCacheWarm(Box::new(usage)),
            responder: Responder::Nobody,
        });
    }
    warming.finish_refresh(generation);
}
