//! QuickJS bytecode in and out: the one module of the crate with `unsafe` (see
//! CONTRIBUTING.md). rquickjs has no safe way to compile a script without running it, to
//! serialise it, or to read bytecode back, so these few raw calls live here, each next to
//! why it is sound.
//!
//! Reading bytecode is the dangerous one: QuickJS trusts bytecode blindly, and a corrupt or
//! foreign buffer can crash the process. [`Sealed::open`] therefore reads only a buffer
//! that [`seal`] made in this same build: a header with a magic, the format version, the
//! build id (the executable's identity, see `cache.rs`) and the length and checksum of the
//! bytecode, all checked before QuickJS sees a byte.
#![allow(unsafe_code)]

use rquickjs::Ctx;
use rquickjs::qjs;

/// Script bytecode compiled but not run yet (a QuickJS function-bytecode value we own).
pub(crate) struct Compiled<'js> {
    ctx: Ctx<'js>,
    raw: qjs::JSValue,
}

impl Drop for Compiled<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` is a value this struct owns (one reference, from `JS_Eval` or
        // `JS_ReadObject`), in `ctx`'s runtime; it is freed once, here.
        unsafe { qjs::JS_FreeValue(self.ctx.as_raw().as_ptr(), self.raw) };
    }
}

fn is_exception(value: qjs::JSValue) -> bool {
    // SAFETY: reads the tag of a value; no memory is touched.
    unsafe { qjs::JS_VALUE_GET_TAG(value) == qjs::JS_TAG_EXCEPTION }
}

/// Compiles `source` as a sloppy global script named `filename`, without running it (as
/// `Ctx::eval_with_options` with `global` and not `strict` would, minus the run).
pub(crate) fn compile<'js>(
    ctx: &Ctx<'js>,
    source: &str,
    filename: &str,
) -> rquickjs::Result<Compiled<'js>> {
    let source = std::ffi::CString::new(source)?;
    let name = std::ffi::CString::new(filename)?;
    let flags = (qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32;
    // SAFETY: both strings are NUL-terminated and outlive the call; the length excludes the
    // NUL as QuickJS expects; the context is live (we hold `ctx`).
    let raw = unsafe {
        qjs::JS_Eval(
            ctx.as_raw().as_ptr(),
            source.as_ptr(),
            source.as_bytes().len() as _,
            name.as_ptr(),
            flags,
        )
    };
    if is_exception(raw) {
        return Err(rquickjs::Error::Exception);
    }
    Ok(Compiled {
        ctx: ctx.clone(),
        raw,
    })
}

impl<'js> Compiled<'js> {
    /// The bytecode, serialised (debug information and function sources kept: stacks need
    /// lines, and `Function.prototype.toString` the source).
    pub(crate) fn write(&self) -> rquickjs::Result<Vec<u8>> {
        let ctx = self.ctx.as_raw().as_ptr();
        let mut len: qjs::size_t = 0;
        // SAFETY: `raw` is a live function-bytecode value of this context; `len` is a valid
        // out-pointer. The returned buffer is QuickJS's, copied then freed with `js_free`.
        unsafe {
            let buf =
                qjs::JS_WriteObject(ctx, &mut len, self.raw, qjs::JS_WRITE_OBJ_BYTECODE as i32);
            if buf.is_null() {
                return Err(rquickjs::Error::Exception);
            }
            let bytes = std::slice::from_raw_parts(buf, len as usize).to_vec();
            qjs::js_free(ctx, buf.cast());
            Ok(bytes)
        }
    }

    /// Runs the script; its completion value (for our wrappers, the function they define).
    pub(crate) fn run(mut self) -> rquickjs::Result<rquickjs::Value<'js>> {
        let ctx = self.ctx.clone();
        // `JS_EvalFunction` takes the reference over; `Drop` then frees `undefined`.
        let raw = std::mem::replace(&mut self.raw, qjs::JS_UNDEFINED);
        drop(self);
        // SAFETY: `raw` is an owned function-bytecode value of this context, handed over.
        let result = unsafe { qjs::JS_EvalFunction(ctx.as_raw().as_ptr(), raw) };
        if is_exception(result) {
            return Err(rquickjs::Error::Exception);
        }
        // SAFETY: `result` is an owned value of this context's runtime (one reference, ours).
        Ok(unsafe { rquickjs::Value::from_raw(ctx, result) })
    }
}

const MAGIC: &[u8; 8] = b"KCQJSBC\0";
/// Changes when the layout below changes.
const FORMAT: u32 = 1;
/// magic, format, build id, bytecode length, bytecode checksum.
const HEADER: usize = 8 + 4 + 16 + 8 + 16;

fn checksum(bytes: &[u8]) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(bytes).to_le_bytes()
}

/// Bytecode with its header, as stored.
pub(crate) fn seal(bytecode: &[u8], build: &[u8; 16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + bytecode.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(build);
    out.extend_from_slice(&(bytecode.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(bytecode));
    out.extend_from_slice(bytecode);
    out
}

/// A stored buffer, to be checked and read back.
pub(crate) struct Sealed<'a>(pub(crate) &'a [u8]);

impl Sealed<'_> {
    /// The bytecode if the header says it is whole and this build's; `None` otherwise.
    fn verified(&self, build: &[u8; 16]) -> Option<&[u8]> {
        let bytes = self.0;
        let (header, body) = bytes.split_at_checked(HEADER)?;
        let (magic, rest) = header.split_at(8);
        let (format, rest) = rest.split_at(4);
        let (id, rest) = rest.split_at(16);
        let (len, sum) = rest.split_at(8);
        let ok = magic == MAGIC
            && format == FORMAT.to_le_bytes()
            && id == build
            && u64::from_le_bytes(len.try_into().ok()?) == body.len() as u64
            && sum == checksum(body);
        ok.then_some(body)
    }

    /// Reads the bytecode back as a script to run; `None` when the header, the checksum
    /// or QuickJS refuses it (the caller compiles the source instead).
    pub(crate) fn open<'js>(&self, ctx: &Ctx<'js>, build: &[u8; 16]) -> Option<Compiled<'js>> {
        let body = self.verified(build)?;
        // SAFETY: QuickJS reads bytecode without validating it, so only bytes that this
        // build wrote may reach it. `verified` checked that: the build id is this
        // executable's (same QuickJS, same flags, same atoms layout), the length is exact
        // and the 128-bit checksum of the bytes matches the one `seal` computed from what
        // `JS_WriteObject` produced, so these are the bytes QuickJS itself serialised (a
        // truncated, corrupt or foreign file fails one of these checks). QuickJS copies
        // what it reads, so `body` need not outlive the value.
        let raw = unsafe {
            qjs::JS_ReadObject(
                ctx.as_raw().as_ptr(),
                body.as_ptr(),
                body.len() as _,
                qjs::JS_READ_OBJ_BYTECODE as i32,
            )
        };
        if is_exception(raw) {
            // Clear the pending exception: the caller compiles instead.
            drop(ctx.catch());
            return None;
        }
        // SAFETY: reads the tag of a value we own.
        let tag = unsafe { qjs::JS_VALUE_GET_TAG(raw) };
        let compiled = Compiled {
            ctx: ctx.clone(),
            raw,
        };
        (tag == qjs::JS_TAG_FUNCTION_BYTECODE).then_some(compiled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_or_foreign_buffer_is_refused_before_quickjs_reads_it() {
        let build = [7u8; 16];
        let sealed = seal(b"bytecode", &build);
        assert_eq!(Sealed(&sealed).verified(&build), Some(&b"bytecode"[..]));
        assert_eq!(Sealed(&sealed).verified(&[8u8; 16]), None);
        assert_eq!(Sealed(&sealed[..sealed.len() - 1]).verified(&build), None);
        assert_eq!(Sealed(&sealed[..10]).verified(&build), None);
        let mut flipped = sealed.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(Sealed(&flipped).verified(&build), None);
        let mut longer = sealed;
        longer.push(0);
        assert_eq!(Sealed(&longer).verified(&build), None);
    }

    #[test]
    fn bytecode_written_here_runs_and_another_builds_is_refused() {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let compiled = compile(&ctx, "(function (a) { return a * 6; })", "kc:test.js").unwrap();
            let sealed = seal(&compiled.write().unwrap(), &[1; 16]);
            drop(compiled);
            assert!(Sealed(&sealed).open(&ctx, &[2; 16]).is_none());
            let function: rquickjs::Function = Sealed(&sealed)
                .open(&ctx, &[1; 16])
                .unwrap()
                .run()
                .unwrap()
                .get()
                .unwrap();
            assert_eq!(function.call::<_, i32>((7,)).unwrap(), 42);
            assert!(compile(&ctx, "(function (", "kc:bad.js").is_err());
            drop(ctx.catch());
        });
    }
}
