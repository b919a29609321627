//! Files as penumbra writes and reads them: writes replace the target in one step, so a write
//! that fails midway (a full disk, a killed process) leaves the earlier file as it was; reads can
//! refuse what a sandbox must not follow (FIFOs and devices, hard links) and never allocate more
//! than they were told to expect.
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("penumbra-files-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! use penumbra_core::files::{self, ReadLimits};
//! let path = dir.join("probes.csv");
//! files::write_atomic(&path, b"x,lit\n1,0.5\n")?;
//! let back = files::read(&path, &ReadLimits::sandboxed(1 << 20))?;
//! assert_eq!(back, b"x,lit\n1,0.5\n");
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells temporary files of one process apart.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically (see [`write_atomic_with`]).
///
/// # Errors
/// Any error creating, writing, flushing or renaming the temporary file; the file at `path` is
/// then untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Writes a file through `fill`: into a new temporary file in the same folder, which is flushed
/// to disk and then renamed over `path`. On any failure (of `fill` too) the temporary file is
/// removed and whatever was at `path` is left byte for byte as it was.
///
/// The rename replaces the directory entry: a hard link or a symbolic link at `path` is replaced
/// by the new file, and the file it pointed to is never written.
///
/// # Errors
/// As [`write_atomic`], or the error `fill` returned.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let (temp, file) = create_temp(path)?;
    // Removes the temporary file on every way out but the rename: an error, or a panic in
    // `fill`.
    let mut guard = RemoveOnDrop(Some(temp.clone()));
    // The new file keeps the permissions of the one it replaces (best effort).
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
    {
        let _ = file.set_permissions(meta.permissions());
    }
    let mut writer = io::BufWriter::with_capacity(1 << 16, file);
    fill(&mut writer)?;
    let file = writer
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temp, path)?;
    guard.0 = None;
    Ok(())
}

/// Removes the file it names when dropped (unless it was taken out).
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            // Best effort: the error that matters is the one being returned.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A new, empty temporary file next to `path` (`.NAME.PID.N.tmp`).
fn create_temp(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names a folder, not a file",
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    loop {
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let mut temp_name = std::ffi::OsString::from(".");
        // A long name would make the temporary one too long for the file system.
        if name.len() <= 200 {
            temp_name.push(name);
        } else {
            temp_name.push("penumbra-write");
        }
        temp_name.push(format!(".{}.{n}.tmp", std::process::id()));
        let temp = dir.join(temp_name);
        match File::options().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// What [`read`] accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// The most bytes to read; a larger file is refused before anything is allocated.
    pub max_bytes: u64,
    /// Refuse FIFOs, sockets and devices (they could block forever or never end).
    pub regular_only: bool,
    /// Refuse a file with more than one hard link (another name of it may lie outside a jail).
    pub single_link: bool,
}

impl ReadLimits {
    /// What a sandboxed script may read: plain files with one link, up to `max_bytes`.
    #[must_use]
    pub fn sandboxed(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            regular_only: true,
            single_link: true,
        }
    }

    /// A user's own input: any readable file (a pipe too), up to `max_bytes`.
    #[must_use]
    pub fn input(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            regular_only: false,
            single_link: false,
        }
    }
}

/// Reads a whole file within `limits`. The file is opened without blocking, so a FIFO is refused
/// (with [`ReadLimits::regular_only`]) instead of waiting for a writer; memory is reserved
/// fallibly, so a file too large for the memory left is an error, not an abort.
///
/// # Errors
/// The file cannot be opened or read, is not a regular file, has several links, is larger
/// than `max_bytes`, or does not fit in memory; the messages say which.
pub fn read(path: &Path, limits: &ReadLimits) -> io::Result<Vec<u8>> {
    let file = open_for_read(path, limits.regular_only)?;
    let meta = file.metadata()?;
    if limits.regular_only && !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a folder, FIFO, socket or device); only plain files are read",
        ));
    }
    if limits.single_link {
        let links = link_count(&meta);
        if links > 1 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the file has {links} hard links; files with other names (which may lie \
                     outside the folder) are not read"
                ),
            ));
        }
    }
    let too_large = |size: u64| {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "the file has {size} bytes, more than the {} allowed",
                limits.max_bytes
            ),
        )
    };
    if meta.is_file() && meta.len() > limits.max_bytes {
        return Err(too_large(meta.len()));
    }
    let mut out = Vec::new();
    if meta.is_file() {
        let expect = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        out.try_reserve_exact(expect)
            .map_err(|_| out_of_memory(meta.len()))?;
    }
    // One more byte than allowed tells a file that grew, or a pipe, past the limit.
    // `read_to_end` grows the vector fallibly (an `OutOfMemory` error, not an abort).
    file.take(limits.max_bytes.saturating_add(1))
        .read_to_end(&mut out)?;
    if out.len() as u64 > limits.max_bytes {
        return Err(too_large(out.len() as u64));
    }
    Ok(out)
}

/// [`read`] of a UTF-8 text file.
///
/// # Errors
/// As [`read`], or the file is not valid UTF-8.
pub fn read_text(path: &Path, limits: &ReadLimits) -> io::Result<String> {
    String::from_utf8(read(path, limits)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn out_of_memory(bytes: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!("not enough memory to read {bytes} more bytes"),
    )
}

#[cfg(unix)]
fn open_for_read(path: &Path, nonblocking: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = File::options();
    options.read(true);
    if nonblocking {
        // Opening a FIFO for reading would otherwise wait for a writer. Regular files ignore
        // the flag.
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(not(unix))]
fn open_for_read(path: &Path, _nonblocking: bool) -> io::Result<File> {
    File::open(path)
}

#[cfg(unix)]
fn link_count(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(not(unix))]
fn link_count(_meta: &std::fs::Metadata) -> u64 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "penumbra-files-{name}-{}-{}",
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_that_fails_midway_leaves_the_old_file_and_no_temporary() {
        let dir = scratch("midway");
        let path = dir.join("results.json");
        write_atomic(&path, b"the good results").unwrap();
        let failed = write_atomic_with(&path, |w| {
            w.write_all(&[b'x'; 100_000])?;
            Err(io::Error::other("disk full"))
        });
        assert_eq!(failed.unwrap_err().to_string(), "disk full");
        assert_eq!(std::fs::read(&path).unwrap(), b"the good results");
        assert_eq!(entries(&dir), ["results.json"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_panic_midway_leaves_no_temporary_and_long_names_work() {
        let dir = scratch("panic");
        let path = dir.join("out.txt");
        write_atomic(&path, b"old").unwrap();
        let caught = std::panic::catch_unwind(|| {
            let _ = write_atomic_with(&path, |w| {
                w.write_all(b"partial")?;
                panic!("boom")
            });
        });
        assert!(caught.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(entries(&dir), ["out.txt"]);
        let long = dir.join("x".repeat(250));
        write_atomic(&long, b"long").unwrap();
        assert_eq!(std::fs::read(&long).unwrap(), b"long");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_new_file_keeps_the_permissions_of_the_old_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        let path = dir.join("secret.json");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"new").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_write_replaces_a_hard_link_instead_of_writing_through_it() {
        let dir = scratch("hardlink");
        let outside = dir.join("outside.txt");
        std::fs::write(&outside, b"precious").unwrap();
        let link = dir.join("out.csv");
        std::fs::hard_link(&outside, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
        assert_eq!(std::fs::read(&link).unwrap(), b"new");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn sandboxed_reads_refuse_fifos_devices_hard_links_and_large_files() {
        let dir = scratch("reads");
        let fifo = dir.join("pipe.obj");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let err = read(&fifo, &ReadLimits::sandboxed(1 << 20)).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let err = read(Path::new("/dev/zero"), &ReadLimits::sandboxed(1 << 20)).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        // A user's own input may be a device, but never more than the limit.
        let err = read(Path::new("/dev/zero"), &ReadLimits::input(1000)).unwrap_err();
        assert!(err.to_string().contains("more than the 1000"), "{err}");

        let file = dir.join("a.txt");
        std::fs::write(&file, b"hello").unwrap();
        assert_eq!(read(&file, &ReadLimits::sandboxed(5)).unwrap(), b"hello");
        let err = read(&file, &ReadLimits::sandboxed(4)).unwrap_err();
        assert!(err.to_string().contains("5 bytes"), "{err}");
        std::fs::hard_link(&file, dir.join("b.txt")).unwrap();
        let err = read(&file, &ReadLimits::sandboxed(5)).unwrap_err();
        assert!(err.to_string().contains("2 hard links"), "{err}");
        assert_eq!(read(&file, &ReadLimits::input(5)).unwrap(), b"hello");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
