//! Data search path and file resolution (spec §1.6, SOFA
//! `FileRepository::findFile`).

use std::path::{Component, Path, PathBuf};

/// Ordered list of directories searched for relative file names (meshes,
/// includes, prefabs, ...), after the current directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataPath {
    pub dirs: Vec<PathBuf>,
}

/// Name of the environment variable read by [`DataPath::from_env`].
pub const DATA_PATH_ENV: &str = "SOFA_DATA_PATH";

impl DataPath {
    pub fn new<I, P>(dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        DataPath { dirs: dirs.into_iter().map(Into::into).collect() }
    }

    /// `SOFA_DATA_PATH` entries (colon-separated, `;` on Windows; empty
    /// entries skipped) first, then `extra` in order.
    pub fn from_env<I, P>(extra: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let mut dirs = Vec::new();
        if let Some(v) = std::env::var_os(DATA_PATH_ENV) {
            dirs.extend(Self::split_list(&v.to_string_lossy()));
        }
        dirs.extend(extra.into_iter().map(Into::into));
        DataPath { dirs }
    }

    /// Split a path list (`a:b:c`) the way SOFA does (separator `:`, or `;`
    /// on Windows), skipping empty entries.
    pub fn split_list(list: &str) -> Vec<PathBuf> {
        let sep = if cfg!(windows) { ';' } else { ':' };
        list.split(sep).filter(|s| !s.is_empty()).map(PathBuf::from).collect()
    }

    /// Resolve `name` the way SOFA's `FileRepository::findFile` does:
    ///
    /// 1. `current_dir/name` (an absolute `name` is taken as is);
    /// 2. absolute `name`: not found;
    /// 3. `name` starting with `./` or `../`: not found. (SOFA's code
    ///    returns here without looking at the search path; spec §1.6 step 3
    ///    is worded ambiguously, the code is authoritative.)
    /// 4. each search directory in order.
    ///
    /// "Exists" means exists on disk (directories included, as
    /// `std::filesystem::exists`). The returned path is `dir.join(name)`
    /// with `.` components removed (`..` is kept, so symlinks behave as with
    /// the OS).
    pub fn resolve(&self, name: &str, current_dir: &Path) -> Option<PathBuf> {
        if name.is_empty() {
            return None;
        }
        let local = clean(&current_dir.join(name));
        if local.exists() {
            return Some(local);
        }
        if Path::new(name).is_absolute() || name.starts_with('/') || name.starts_with('\\') {
            return None;
        }
        if name.starts_with("./") || name.starts_with("../") {
            return None;
        }
        self.dirs.iter().map(|d| clean(&d.join(name))).find(|p| p.exists())
    }

    /// The places [`resolve`](Self::resolve) looks at for `name`, in order
    /// (for error messages).
    pub fn candidates(&self, name: &str, current_dir: &Path) -> Vec<PathBuf> {
        let mut v = vec![clean(&current_dir.join(name))];
        let abs = Path::new(name).is_absolute() || name.starts_with('/') || name.starts_with('\\');
        if !abs && !name.starts_with("./") && !name.starts_with("../") {
            v.extend(self.dirs.iter().map(|d| clean(&d.join(name))));
        }
        v
    }

    /// Human readable search list: `current_dir:dir1:dir2...` (as SOFA's
    /// "File X NOT FOUND in ..." message).
    pub fn describe(&self, current_dir: &Path) -> String {
        let mut s = current_dir.display().to_string();
        for d in &self.dirs {
            s.push(':');
            s.push_str(&d.display().to_string());
        }
        s
    }
}

/// Remove `.` components (keeps `..`, keeps a leading `.` only if the path
/// is just `.`).
pub(crate) fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("settee-scene-dp-{}-{}", tag, std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn resolution_order() {
        let root = tmpdir("order");
        let cwd = root.join("scene");
        let share = root.join("share");
        let examples = root.join("examples");
        for d in [&cwd, &share, &examples] {
            fs::create_dir_all(d.join("mesh")).unwrap();
        }
        fs::write(cwd.join("local.txt"), "x").unwrap();
        fs::write(share.join("mesh/a.obj"), "x").unwrap();
        fs::write(examples.join("mesh/a.obj"), "x").unwrap();
        fs::write(examples.join("mesh/b.obj"), "x").unwrap();
        fs::write(root.join("up.txt"), "x").unwrap();
        fs::write(share.join("up2.txt"), "x").unwrap();
        let dp = DataPath::new([share.clone(), examples.clone()]);

        assert_eq!(dp.resolve("local.txt", &cwd), Some(cwd.join("local.txt")));
        assert_eq!(dp.resolve("mesh/a.obj", &cwd), Some(share.join("mesh/a.obj")));
        assert_eq!(dp.resolve("mesh/b.obj", &cwd), Some(examples.join("mesh/b.obj")));
        assert_eq!(dp.resolve("mesh/c.obj", &cwd), None);
        // ../ relative to cwd works; not searched in the data path
        assert_eq!(dp.resolve("../up.txt", &cwd), Some(cwd.join("../up.txt")));
        assert_eq!(dp.resolve("../up2.txt", &cwd), None);
        assert_eq!(dp.resolve("./local.txt", &cwd), Some(cwd.join("local.txt")));
        // absolute
        let abs = share.join("mesh/a.obj");
        assert_eq!(dp.resolve(abs.to_str().unwrap(), &cwd), Some(abs.clone()));
        assert_eq!(dp.resolve("/nonexistent/settee/x.obj", &cwd), None);
        assert_eq!(dp.resolve("", &cwd), None);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn split() {
        if !cfg!(windows) {
            assert_eq!(DataPath::split_list("a::b:"), vec![PathBuf::from("a"), PathBuf::from("b")]);
        }
    }

    #[test]
    fn clean_path() {
        assert_eq!(clean(Path::new("a/./b/../c")), PathBuf::from("a/b/../c"));
        assert_eq!(clean(Path::new("./x")), PathBuf::from("x"));
        assert_eq!(clean(Path::new(".")), PathBuf::from("."));
    }
}
