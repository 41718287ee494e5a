//! QuickJS's heap on mimalloc. Extension code allocates and frees small objects at a high
//! rate (every event builds its payload, context lookups and JSON); on glibc's malloc that
//! was a fifth of the JS thread's time per event. Only the JS runtime uses this allocator:
//! the rest of the process keeps the system one, so a session without extensions does not
//! change. The second module of the crate with `unsafe` (see CONTRIBUTING.md): the calls
//! below are mimalloc's C API, which has exactly the contract QuickJS's allocator hooks
//! need (malloc, calloc, realloc, free and usable size on the same heap).
#![allow(unsafe_code)]

use std::ffi::c_void;

use libmimalloc_sys::mi_calloc;
use libmimalloc_sys::mi_free;
use libmimalloc_sys::mi_malloc;
use libmimalloc_sys::mi_realloc;
use libmimalloc_sys::mi_usable_size;

/// The allocator handed to [`rquickjs::AsyncRuntime::new_with_alloc`].
pub(crate) struct JsHeap;

// SAFETY: every pointer comes from mimalloc and goes back to it; mimalloc aligns to at
// least 16 bytes (the trait asks for `usize` alignment) and returns null on failure, which
// QuickJS turns into an out-of-memory exception.
unsafe impl rquickjs::allocator::Allocator for JsHeap {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        // SAFETY: plain allocation; any size is valid.
        unsafe { mi_malloc(size).cast() }
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        // SAFETY: mimalloc checks `count * size` for overflow.
        unsafe { mi_calloc(count, size).cast() }
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: the caller hands back a pointer this allocator returned.
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        // QuickJS frees through `realloc(p, 0)` as with the C library's; mimalloc would
        // hand back a minimal block instead.
        if new_size == 0 {
            // SAFETY: as in `dealloc`; a null pointer is ignored.
            unsafe { mi_free(ptr.cast::<c_void>()) };
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` is null or came from this allocator.
        unsafe { mi_realloc(ptr.cast::<c_void>(), new_size).cast() }
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: `ptr` came from this allocator (rquickjs answers null itself).
        unsafe { mi_usable_size(ptr.cast::<c_void>()) }
    }
}
