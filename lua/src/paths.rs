//! The file jail: a script names files by relative paths, which must resolve inside one folder
//! (the script root for reads, the output folder for writes), symbolic links included.
//!
//! Checks happen when a path is used; a link swapped in between the check and the use is not
//! defended against (scripts cannot create links themselves).

use std::cell::RefCell;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A folder scripts may use, by paths relative to it.
pub(crate) struct Jail {
    /// The folder as the host gave it, used in chunk names and messages.
    shown: PathBuf,
    /// The canonical folder; for an output folder that does not exist yet, filled in when the
    /// first write creates it.
    canonical: RefCell<Option<PathBuf>>,
}

impl Jail {
    /// A jail on an existing folder.
    pub fn existing(shown: PathBuf) -> io::Result<Self> {
        let canonical = shown.canonicalize()?;
        if !canonical.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, "not a folder"));
        }
        Ok(Self {
            shown,
            canonical: RefCell::new(Some(canonical)),
        })
    }

    /// A jail on a folder created by the first write into it.
    pub fn created_on_write(shown: PathBuf) -> Self {
        Self {
            shown,
            canonical: RefCell::new(None),
        }
    }

    /// The folder as the host gave it.
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// The canonical folder, creating it if needed.
    pub fn canonical(&self) -> Result<PathBuf, String> {
        if let Some(path) = self.canonical.borrow().as_ref() {
            return Ok(path.clone());
        }
        std::fs::create_dir_all(&self.shown)
            .map_err(|e| format!("cannot create {}: {e}", self.shown.display()))?;
        let path = self
            .shown
            .canonicalize()
            .map_err(|e| format!("cannot resolve {}: {e}", self.shown.display()))?;
        *self.canonical.borrow_mut() = Some(path.clone());
        Ok(path)
    }

    /// How a canonical path inside the jail is shown: the host's folder joined with the part
    /// below it (`scripts/lib/util.luau`).
    pub fn show(&self, inside: &Path) -> PathBuf {
        match self.canonical().ok().and_then(|c| {
            inside
                .strip_prefix(&c)
                .ok()
                .map(|rest| self.shown.join(rest))
        }) {
            Some(path) => path,
            None => inside.to_path_buf(),
        }
    }

    /// The canonical path of an existing file `rel` inside the jail.
    pub fn read_path(&self, rel: &str) -> Result<PathBuf, String> {
        self.resolve_existing(&self.canonical()?, rel)
    }

    /// The canonical path of an existing file `rel` below `base`, a folder inside the jail.
    pub fn resolve_existing(&self, base: &Path, rel: &str) -> Result<PathBuf, String> {
        let rel = relative(rel)?;
        let joined = base.join(&rel);
        let canonical = joined
            .canonicalize()
            .map_err(|e| format!("{}: {e}", self.show(&joined).display()))?;
        self.check_inside(&canonical, &rel)?;
        Ok(canonical)
    }

    /// Fails unless a canonical path lies inside the jail.
    pub fn check_inside(&self, canonical: &Path, rel: &Path) -> Result<(), String> {
        if canonical.starts_with(self.canonical()?) {
            Ok(())
        } else {
            Err(format!(
                "{} leads outside {} (through a symbolic link)",
                rel.display(),
                self.shown.display()
            ))
        }
    }

    /// A path to write `rel` to inside the jail: missing folders are created one by one, every
    /// existing step is checked to stay inside, and the file itself must not be a link.
    pub fn write_path(&self, rel: &str) -> Result<PathBuf, String> {
        let base = self.canonical()?;
        let rel = relative(rel)?;
        let mut parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
        let Some(file) = parts.pop() else {
            return Err("the path names no file".into());
        };
        let mut at = base.clone();
        for part in parts {
            let next = at.join(part);
            match std::fs::symlink_metadata(&next) {
                Ok(meta) if meta.is_dir() => at = next,
                Ok(meta) if meta.file_type().is_symlink() => {
                    let target = next
                        .canonicalize()
                        .map_err(|e| format!("{}: {e}", self.show(&next).display()))?;
                    self.check_inside(&target, &rel)?;
                    if !target.is_dir() {
                        return Err(format!("{} is not a folder", self.show(&next).display()));
                    }
                    at = target;
                }
                Ok(_) => {
                    return Err(format!("{} is not a folder", self.show(&next).display()));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    std::fs::create_dir(&next).map_err(|e| {
                        format!("cannot create {}: {e}", self.show(&next).display())
                    })?;
                    at = next;
                }
                Err(e) => return Err(format!("{}: {e}", self.show(&next).display())),
            }
        }
        let target = at.join(file);
        match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => Err(format!(
                "{} is a symbolic link; scripts do not write through links",
                self.show(&target).display()
            )),
            Ok(meta) if meta.is_dir() => {
                Err(format!("{} is a folder", self.show(&target).display()))
            }
            _ => Ok(target),
        }
    }
}

/// Checks a script's path: relative, `/`-separated, without `..`; returns its parts.
pub(crate) fn relative(text: &str) -> Result<PathBuf, String> {
    if text.is_empty() {
        return Err("the path is empty".into());
    }
    if text.contains('\0') {
        return Err(format!("{text:?} contains a NUL byte"));
    }
    if text.contains('\\') {
        return Err(format!("{text:?} uses '\\'; separate folders with '/'"));
    }
    if text.ends_with('/') {
        return Err(format!(
            "{text:?} ends with '/', so it names a folder; name a file (\"{}out.png\")",
            text
        ));
    }
    let bytes = text.as_bytes();
    let drive = bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic();
    if text.starts_with('/') || drive || Path::new(text).is_absolute() {
        return Err(format!(
            "{text:?} is absolute; scripts name files relative to their folder"
        ));
    }
    let mut out = PathBuf::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "{text:?} goes up with '..'; scripts only reach files below their folder"
                ));
            }
            name => out.push(name),
        }
    }
    if out.components().any(|c| !matches!(c, Component::Normal(_))) || out.as_os_str().is_empty() {
        return Err(format!("{text:?} names no file"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::relative;

    #[test]
    fn script_paths_must_stay_relative_and_below() {
        assert_eq!(
            relative("./lib//util.luau").unwrap(),
            std::path::PathBuf::from("lib/util.luau")
        );
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "C:/x",
            "a\\b",
            ".",
            "./",
            "newdir/",
        ] {
            assert!(relative(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
