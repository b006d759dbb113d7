//! The file watcher behind the checkpoints' looks at the workspace: which
//! paths may have changed since the last look, so a look before or after a
//! shell command reads only those and not the whole tree.
//!
//! On Linux, one inotify instance with one watch per folder the look
//! walked: folders the ignore rules leave out (`target/`, `node_modules/`)
//! are never watched, so they cost no watches, and a new folder is watched
//! before it is listed, so nothing made in it falls between the two. The
//! kernel queues an event inside the system call that made the change, so
//! when a command has ended every event it caused is queued: [`TreeWatch::take`]
//! drains the queue itself before it answers, and nothing is still on its
//! way. A thread drains it meanwhile, so a long command that changes many
//! files does not overflow the queue. When events were lost all the same
//! (the queue overflowed, or more paths changed than are worth listing),
//! `take` says so and the look walks the whole tree.
//!
//! Not seen, as by any inotify watcher: a change through a memory map
//! whose file was closed before the writes, a change through a hard link
//! from a folder outside the workspace, and a change on a network file
//! system made by another machine.
//!
//! Elsewhere there is no watcher: [`TreeWatch::start`] says so and every
//! look walks the tree.

use std::collections::HashSet;
use std::path::PathBuf;

/// What may have changed since the last [`TreeWatch::take`].
#[derive(Debug)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub enum Pending {
    /// These paths (files or folders; named, not necessarily changed).
    Paths(HashSet<PathBuf>),
    /// Events were lost: anything may have changed. The string says why.
    Lost(String),
}

/// More changed paths than this between two looks: a walk of the tree is
/// as cheap as the list, and the list is not kept.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const MAX_PENDING: usize = 100_000;

pub use imp::TreeWatch;

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::{HashMap, HashSet};
    use std::ffi::OsStr;
    use std::os::fd::AsRawFd as _;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex, Weak};

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

    use super::{Pending, MAX_PENDING};
    use crate::sync::MutexExt;

    /// What a folder's watch reports: its entries made, changed, removed
    /// or renamed, and the folder itself removed or renamed. Links are not
    /// followed (the walk does not follow them either).
    fn mask() -> WatchMask {
        WatchMask::MODIFY
            | WatchMask::ATTRIB
            | WatchMask::CLOSE_WRITE
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::DONT_FOLLOW
            | WatchMask::ONLYDIR
    }

    /// The watched folders and what their events named. A clone shares them.
    #[derive(Clone)]
    pub struct TreeWatch {
        shared: Arc<Shared>,
    }

    struct Shared {
        fd: i32,
        inner: Mutex<Inner>,
        /// Tests stop the draining thread to overflow the queue.
        #[cfg(test)]
        paused: std::sync::atomic::AtomicBool,
        /// The draining thread has seen `paused` and reads nothing more.
        #[cfg(test)]
        idle: std::sync::atomic::AtomicBool,
    }

    struct Inner {
        inotify: Inotify,
        watches: Watches,
        buffer: Vec<u8>,
        /// Each watch's folder, by the watch's number (a folder renamed
        /// keeps its watch: the number is pointed at the new path when the
        /// look walks it there).
        folders: HashMap<i32, PathBuf>,
        /// Each watched folder's watch.
        by_folder: HashMap<PathBuf, WatchDescriptor>,
        changed: HashSet<PathBuf>,
        lost: Option<String>,
    }

    impl TreeWatch {
        /// An inotify instance and the thread that drains it; why not,
        /// when either cannot be had (the per-user limit of instances).
        pub fn start() -> Result<TreeWatch, String> {
            let inotify = Inotify::init().map_err(|err| format!("cannot start an inotify instance: {err}"))?;
            let watches = inotify.watches();
            let inner = Inner {
                inotify,
                watches,
                buffer: vec![0; 64 * 1024],
                folders: HashMap::new(),
                by_folder: HashMap::new(),
                changed: HashSet::new(),
                lost: None,
            };
            let fd = inner.inotify.as_raw_fd();
            let shared = Arc::new(Shared {
                fd,
                inner: Mutex::new(inner),
                #[cfg(test)]
                paused: Default::default(),
                #[cfg(test)]
                idle: Default::default(),
            });
            let weak = Arc::downgrade(&shared);
            std::thread::Builder::new()
                .name("tandem-tree-watch".into())
                .spawn(move || drain_in_background(weak))
                .map_err(|err| format!("cannot start the watcher's thread: {err}"))?;
            Ok(TreeWatch { shared })
        }

        /// Watch `folder` (its entries, not its subfolders' entries). A
        /// folder that is gone or cannot be read is not watched and that is
        /// no error (the walk cannot list it either); `Err` means the
        /// watcher cannot be complete (the limit of watches is reached).
        pub fn add(&self, folder: &Path) -> Result<(), String> {
            let mut inner = self.shared.inner.locked();
            // The lock is held across the call, so the draining thread
            // never reads an event of a watch it does not know yet.
            match inner.watches.add(folder, mask()) {
                Ok(wd) => {
                    let id = wd.get_watch_descriptor_id();
                    if let Some(old) = inner.folders.insert(id, folder.to_path_buf()) {
                        // The same folder under another name (renamed, or
                        // a second root over it): the old name has no watch.
                        if old != folder && inner.by_folder.get(&old).is_some_and(|w| w.get_watch_descriptor_id() == id) {
                            inner.by_folder.remove(&old);
                        }
                    }
                    inner.by_folder.insert(folder.to_path_buf(), wd);
                    Ok(())
                }
                Err(err) => match err.raw_os_error() {
                    Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::EACCES) | Some(libc::ELOOP) => Ok(()),
                    _ => Err(format!("cannot watch {}: {err}", folder.display())),
                },
            }
        }

        /// Stop watching `folder` (it is gone, or the ignore rules now
        /// leave it out). A watch that has moved on to another name stays.
        pub fn remove(&self, folder: &Path) {
            let mut inner = self.shared.inner.locked();
            let Some(wd) = inner.by_folder.remove(folder) else { return };
            let id = wd.get_watch_descriptor_id();
            if inner.folders.get(&id).is_some_and(|f| f == folder) {
                inner.folders.remove(&id);
                // Gone already when the folder was removed: nothing to undo.
                let _ = inner.watches.remove(wd);
            }
        }

        /// Every path named since the last call (the queue drained first,
        /// so everything that happened before this call is in).
        pub fn take(&self) -> Pending {
            let mut inner = self.shared.inner.locked();
            inner.drain();
            let changed = std::mem::take(&mut inner.changed);
            match inner.lost.take() {
                Some(why) => Pending::Lost(why),
                None => Pending::Paths(changed),
            }
        }

        /// How many folders are watched.
        pub fn watched(&self) -> usize {
            self.shared.inner.locked().by_folder.len()
        }

        /// Stop (or restart) the draining thread, so a test can overflow
        /// the kernel's queue. A pause returns once the thread has stopped
        /// reading: it may be waiting in `poll` or draining when asked.
        #[cfg(test)]
        pub fn pause_draining(&self, paused: bool) {
            use std::sync::atomic::Ordering::SeqCst;
            self.shared.paused.store(paused, SeqCst);
            if !paused {
                return;
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !self.shared.idle.load(SeqCst) {
                assert!(std::time::Instant::now() < deadline, "the watcher's thread did not pause");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }

    impl Inner {
        /// Read every queued event (the fd does not block).
        fn drain(&mut self) {
            loop {
                let Inner { inotify, buffer, folders, by_folder, changed, lost, .. } = self;
                let events = match inotify.read_events(buffer) {
                    Ok(events) => events,
                    Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => return,
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(err) => {
                        lost.get_or_insert_with(|| format!("cannot read the watcher's events ({err})"));
                        return;
                    }
                };
                for event in events {
                    note(folders, by_folder, changed, lost, event.wd.get_watch_descriptor_id(), event.mask, event.name);
                }
                if changed.len() > MAX_PENDING {
                    lost.get_or_insert_with(|| format!("more than {MAX_PENDING} paths changed since the last look"));
                    changed.clear();
                }
            }
        }
    }

    /// One event: the path it names joins the changed ones.
    fn note(
        folders: &mut HashMap<i32, PathBuf>,
        by_folder: &mut HashMap<PathBuf, WatchDescriptor>,
        changed: &mut HashSet<PathBuf>,
        lost: &mut Option<String>,
        wd: i32,
        mask: EventMask,
        name: Option<&OsStr>,
    ) {
        if mask.contains(EventMask::Q_OVERFLOW) {
            lost.get_or_insert_with(|| "the watcher's queue overflowed (events were lost)".to_string());
            return;
        }
        if mask.contains(EventMask::IGNORED) {
            // The watch is gone (its folder was removed, or we removed it).
            if let Some(folder) = folders.remove(&wd) {
                if by_folder.get(&folder).is_some_and(|w| w.get_watch_descriptor_id() == wd) {
                    by_folder.remove(&folder);
                }
            }
            return;
        }
        // An event of a watch removed since: its folder is no longer looked at.
        let Some(folder) = folders.get(&wd) else { return };
        if changed.len() <= MAX_PENDING {
            changed.insert(match name {
                Some(name) => folder.join(name),
                None => folder.clone(),
            });
        }
    }

    /// Keep the kernel's queue short while nobody looks: wait for events
    /// (at most a quarter second, to notice the watcher is dropped) and
    /// read them.
    fn drain_in_background(shared: Weak<Shared>) {
        loop {
            let Some(shared) = shared.upgrade() else { return };
            // Not idle, then the pause looked at: a pause that reads `idle`
            // true after setting `paused` is sure this thread saw it.
            #[cfg(test)]
            shared.idle.store(false, std::sync::atomic::Ordering::SeqCst);
            #[cfg(test)]
            if shared.paused.load(std::sync::atomic::Ordering::SeqCst) {
                shared.idle.store(true, std::sync::atomic::Ordering::SeqCst);
                drop(shared);
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            }
            let mut poll = libc::pollfd { fd: shared.fd, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd; its fd stays open while `shared`
            // (which owns the inotify instance) is held.
            let ready = unsafe { libc::poll(&mut poll, 1, 250) };
            if ready > 0 {
                shared.inner.locked().drain();
            }
        }
    }

    #[cfg(test)]
    impl TreeWatch {
        /// Feed an event as the kernel would (a queue overflow, say).
        pub fn inject(&self, mask: EventMask) {
            let mut inner = self.shared.inner.locked();
            let Inner { folders, by_folder, changed, lost, .. } = &mut *inner;
            note(folders, by_folder, changed, lost, -1, mask, None);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::Path;

    use super::Pending;

    /// No watcher on this platform: every look walks the tree.
    #[derive(Clone)]
    pub struct TreeWatch(());

    impl TreeWatch {
        pub fn start() -> Result<TreeWatch, String> {
            Err("no inotify on this platform".into())
        }
        pub fn add(&self, _folder: &Path) -> Result<(), String> {
            Ok(())
        }
        pub fn remove(&self, _folder: &Path) {}
        pub fn take(&self) -> Pending {
            Pending::Lost("no watcher".into())
        }
        pub fn watched(&self) -> usize {
            0
        }
    }
}
