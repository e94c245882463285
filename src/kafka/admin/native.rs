//! One owner for each librdkafka C object the admin requests make: [`Native`] holds a
//! non-null pointer and frees it once, on drop, with the object's own destroy function
//! (rust-rdkafka's `NativePtr` pattern, which it keeps private).

use std::ptr::NonNull;

use rdkafka_sys as sys;

/// A librdkafka type and the function that frees it.
///
/// # Safety
/// `destroy` must free an object of this type that nothing else frees.
pub(crate) unsafe trait Destroy {
    /// # Safety
    /// `p` is a live object of this type, owned by the caller, freed here once.
    unsafe fn destroy(p: *mut Self);
}

/// An owned librdkafka object, freed once when dropped.
pub(crate) struct Native<T: Destroy>(NonNull<T>);

impl<T: Destroy> Native<T> {
    /// Takes ownership of `p`; `None` when librdkafka gave null (it refused).
    ///
    /// # Safety
    /// `p` is null or a live object that the caller owns and nothing else frees.
    pub(crate) unsafe fn from_ptr(p: *mut T) -> Option<Native<T>> {
        NonNull::new(p).map(Native)
    }

    /// The pointer, for calls that read or fill the object; it stays ours.
    pub(crate) fn ptr(&self) -> *mut T {
        self.0.as_ptr()
    }
}

impl<T: Destroy> Drop for Native<T> {
    fn drop(&mut self) {
        // SAFETY: the pointer came to `from_ptr` with ownership and is freed only here.
        unsafe { T::destroy(self.0.as_ptr()) }
    }
}

macro_rules! destroy_with {
    ($($t:ty => $f:path),* $(,)?) => {$(
        // SAFETY: `$f` is librdkafka's destructor of `$t`.
        unsafe impl Destroy for $t {
            unsafe fn destroy(p: *mut Self) {
                // SAFETY: the caller's promise: `p` is live and freed once.
                unsafe { $f(p) }
            }
        }
    )*};
}

destroy_with! {
    sys::rd_kafka_queue_t => sys::rd_kafka_queue_destroy,
    sys::rd_kafka_event_t => sys::rd_kafka_event_destroy,
    sys::rd_kafka_AdminOptions_t => sys::rd_kafka_AdminOptions_destroy,
    sys::rd_kafka_ConfigResource_t => sys::rd_kafka_ConfigResource_destroy,
    sys::rd_kafka_AclBinding_t => sys::rd_kafka_AclBinding_destroy,
    sys::rd_kafka_TopicCollection_t => sys::rd_kafka_TopicCollection_destroy,
    sys::rd_kafka_error_t => sys::rd_kafka_error_destroy,
}

/// A C string librdkafka gave us, copied; empty for null.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that stays valid during the call.
pub(crate) unsafe fn text(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller's promise.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}
