//! Locks that outlive a panicked holder: the one way this crate takes a
//! `std::sync` lock.
//!
//! A lock whose holder panicked is poisoned; `lock()` then answers an
//! error holding the guard. Everything kept behind these locks stays
//! consistent at every point a holder can panic (each holder changes it
//! in one assignment or one collection call), so the guard is taken
//! anyway: one panicked tool call must not take the whole server down
//! with it (an LSP handler answers an error, it never ends the server).
//!
//! ```
//! use std::sync::{Mutex, RwLock};
//! use tandem::sync::{MutexExt, RwLockExt};
//! let count = Mutex::new(1);
//! *count.locked() += 1;
//! let names = RwLock::new(vec!["a"]);
//! names.writing().push("b");
//! assert_eq!((*count.locked(), names.reading().len()), (2, 2));
//! ```

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex`] taken whether or not a holder panicked.
pub trait MutexExt<T: ?Sized> {
    /// The guard, blocking until it is free.
    fn locked(&self) -> MutexGuard<'_, T>;
}

/// [`RwLock`] taken whether or not a holder panicked.
pub trait RwLockExt<T: ?Sized> {
    /// A shared guard.
    fn reading(&self) -> RwLockReadGuard<'_, T>;
    /// The exclusive guard.
    fn writing(&self) -> RwLockWriteGuard<'_, T>;
}

/// The value out of a [`Mutex`] nobody holds any more, whether or not a
/// holder panicked.
pub trait IntoValue<T> {
    fn into_value(self) -> T;
}

impl<T: ?Sized> MutexExt<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<T: ?Sized> RwLockExt<T> for RwLock<T> {
    fn reading(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn writing(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<T> IntoValue<T> for Mutex<T> {
    fn into_value(self) -> T {
        self.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_whose_holder_panicked_is_taken_with_what_the_holder_left() {
        let shared = std::sync::Arc::new(Mutex::new(vec![1]));
        let rw = std::sync::Arc::new(RwLock::new(1));
        let (a, b) = (shared.clone(), rw.clone());
        let panicked = std::thread::spawn(move || {
            a.locked().push(2);
            let _write = b.writing();
            let _held = a.locked();
            panic!("a holder panics");
        })
        .join();
        assert!(panicked.is_err());
        assert!(shared.is_poisoned() && rw.is_poisoned());
        assert_eq!(*shared.locked(), vec![1, 2]);
        *rw.writing() += 1;
        assert_eq!(*rw.reading(), 2);
        let inner = std::sync::Arc::try_unwrap(shared).ok().map(IntoValue::into_value);
        assert_eq!(inner, Some(vec![1, 2]));
    }
}
