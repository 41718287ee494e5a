//! The `fs` module's operations (`__kc.fs(op, args)`) and the Node-shaped errors every op
//! answers failures with (`{"error": {code, message, syscall, path}}`).

use std::io::Write as _;
use std::path::Path;

use serde_json::Value;
use serde_json::json;

pub(crate) fn error(code: &str, message: &str) -> Value {
    json!({ "error": { "code": code, "message": message } })
}

pub(crate) fn io_error(error: &std::io::Error, syscall: &str, path: &str) -> Value {
    let code = match error.kind() {
        std::io::ErrorKind::NotFound => "ENOENT",
        std::io::ErrorKind::PermissionDenied => "EACCES",
        std::io::ErrorKind::AlreadyExists => "EEXIST",
        std::io::ErrorKind::IsADirectory => "EISDIR",
        std::io::ErrorKind::NotADirectory => "ENOTDIR",
        std::io::ErrorKind::DirectoryNotEmpty => "ENOTEMPTY",
        _ => "EIO",
    };
    let what = match code {
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EEXIST" => "file already exists",
        "EISDIR" => "illegal operation on a directory",
        "ENOTDIR" => "not a directory",
        "ENOTEMPTY" => "directory not empty",
        _ => "i/o error",
    };
    json!({ "error": {
        "code": code,
        "message": format!("{code}: {what}, {syscall} '{path}'"),
        "syscall": syscall,
        "path": path,
    }})
}

pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

fn stat_json(meta: &std::fs::Metadata) -> Value {
    let millis = |t: std::io::Result<std::time::SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt as _;
        meta.permissions().mode()
    };
    #[cfg(not(unix))]
    let mode = 0u32;
    json!({
        "isFile": meta.is_file(),
        "isDirectory": meta.is_dir(),
        "isSymbolicLink": meta.file_type().is_symlink(),
        "size": meta.len(),
        "mode": mode,
        "mtimeMs": millis(meta.modified()),
        "atimeMs": millis(meta.accessed()),
        "birthtimeMs": millis(meta.created()),
    })
}

/// One file-system operation (`fs` module, sync; the promise forms wrap these).
pub(crate) fn fs_op(op: &str, args: &Value) -> Value {
    let path = str_arg(args, "path");
    let result: Result<Value, Value> = match op {
        "readFile" => std::fs::read(path)
            .map(|bytes| {
                if args.get("binary").and_then(Value::as_bool) == Some(true) {
                    Value::Array(bytes.into_iter().map(Value::from).collect())
                } else {
                    Value::String(String::from_utf8_lossy(&bytes).into_owned())
                }
            })
            .map_err(|e| io_error(&e, "open", path)),
        "writeFile" => {
            let data = str_arg(args, "data");
            let append = args.get("append").and_then(Value::as_bool) == Some(true);
            std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(append)
                .truncate(!append)
                .open(path)
                .and_then(|mut file| file.write_all(data.as_bytes()))
                .map(|()| Value::Null)
                .map_err(|e| io_error(&e, "open", path))
        }
        "exists" => Ok(Value::Bool(Path::new(path).exists())),
        "stat" => std::fs::metadata(path)
            .map(|m| stat_json(&m))
            .map_err(|e| io_error(&e, "stat", path)),
        "lstat" => std::fs::symlink_metadata(path)
            .map(|m| stat_json(&m))
            .map_err(|e| io_error(&e, "lstat", path)),
        "readdir" => std::fs::read_dir(path)
            .map(|entries| {
                let mut list: Vec<Value> = entries
                    .filter_map(Result::ok)
                    .map(|entry| {
                        let kind = entry.file_type().ok();
                        json!({
                            "name": entry.file_name().to_string_lossy(),
                            "isFile": kind.is_some_and(|k| k.is_file()),
                            "isDirectory": kind.is_some_and(|k| k.is_dir()),
                            "isSymbolicLink": kind.is_some_and(|k| k.is_symlink()),
                        })
                    })
                    .collect();
                list.sort_by(|a, b| str_arg(a, "name").cmp(str_arg(b, "name")));
                Value::Array(list)
            })
            .map_err(|e| io_error(&e, "scandir", path)),
        "mkdir" => {
            let recursive = args.get("recursive").and_then(Value::as_bool) == Some(true);
            let result = if recursive {
                std::fs::create_dir_all(path)
            } else {
                std::fs::create_dir(path)
            };
            result
                .map(|()| Value::Null)
                .map_err(|e| io_error(&e, "mkdir", path))
        }
        "rm" => {
            let recursive = args.get("recursive").and_then(Value::as_bool) == Some(true);
            let force = args.get("force").and_then(Value::as_bool) == Some(true);
            let p = Path::new(path);
            let result = if p.is_dir() && recursive {
                std::fs::remove_dir_all(p)
            } else if p.is_dir() {
                std::fs::remove_dir(p)
            } else {
                std::fs::remove_file(p)
            };
            match result {
                Err(e) if force && e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Null),
                other => other
                    .map(|()| Value::Null)
                    .map_err(|e| io_error(&e, "rm", path)),
            }
        }
        "rename" => std::fs::rename(path, str_arg(args, "to"))
            .map(|()| Value::Null)
            .map_err(|e| io_error(&e, "rename", path)),
        "copyFile" => std::fs::copy(path, str_arg(args, "to"))
            .map(|_| Value::Null)
            .map_err(|e| io_error(&e, "copyfile", path)),
        "realpath" => std::fs::canonicalize(path)
            .map(|p| Value::String(p.to_string_lossy().into_owned()))
            .map_err(|e| io_error(&e, "realpath", path)),
        "mkdtemp" => {
            let prefix = path;
            let mut found = None;
            for n in 0..1000u32 {
                let candidate = format!(
                    "{prefix}{:06x}",
                    (std::process::id() ^ n.wrapping_mul(2654435761)) & 0xff_ffff
                );
                if std::fs::create_dir(&candidate).is_ok() {
                    found = Some(candidate);
                    break;
                }
            }
            found
                .map(Value::String)
                .ok_or_else(|| error("EEXIST", &format!("mkdtemp '{prefix}' failed")))
        }
        _ => Err(error(
            "ERR_KC_UNSUPPORTED",
            &format!("fs.{op} is not supported by KnightCode's Node layer"),
        )),
    };
    match result {
        Ok(value) => json!({ "ok": value }),
        Err(error) => error,
    }
}
