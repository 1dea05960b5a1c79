//! Bounds on what a scene can make Settee allocate or read.
//!
//! Every allocation whose size comes from scene text (a grid resolution, a state size, an index
//! range, a mesh header's element count) asks [`check`] first, and every file a scene names is
//! read through [`read_file`] / [`read_to_string`]. A scene asking for more than the budget gets a
//! clear error instead of an abort on allocation failure or a machine swapping for minutes.
//!
//! The memory budget defaults to [`DEFAULT_MEMORY_BUDGET`] (or half the machine's memory when that
//! is less) and is set (in bytes, with an optional
//! `K`/`M`/`G`/`T` suffix, powers of 1024) by the `SETTEE_MEMORY_BUDGET` environment variable; the
//! file-size bound defaults to [`DEFAULT_MAX_FILE_SIZE`] and is set by `SETTEE_MAX_FILE_SIZE`.

use std::io::Read;
use std::path::Path;

use crate::diag::{SimError, SimResult};

/// Environment variable overriding the memory budget.
pub const MEMORY_BUDGET_ENV: &str = "SETTEE_MEMORY_BUDGET";
/// Environment variable overriding the largest file a scene may make Settee read.
pub const MAX_FILE_SIZE_ENV: &str = "SETTEE_MAX_FILE_SIZE";
/// 8 GiB.
pub const DEFAULT_MEMORY_BUDGET: u64 = 8 << 30;
/// 1 GiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 30;

/// Parses `123`, `512M`, `8G`, `1.5G` (powers of 1024).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                'B' => 1,
                _ => return None,
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let x: f64 = num.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0).then_some((x * mult as f64) as u64)
}

fn env_size(var: &str, default: u64) -> u64 {
    std::env::var(var).ok().and_then(|v| parse_size(&v)).unwrap_or(default)
}

/// The memory budget in bytes: `SETTEE_MEMORY_BUDGET`, else 8 GiB or half the machine's memory
/// when that is less.
pub fn memory_budget() -> u64 {
    static DEFAULT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let default = *DEFAULT.get_or_init(|| match physical_memory() {
        Some(total) => DEFAULT_MEMORY_BUDGET.min(total / 2),
        None => DEFAULT_MEMORY_BUDGET,
    });
    env_size(MEMORY_BUDGET_ENV, default)
}

/// Total memory from `/proc/meminfo` (Linux); `None` elsewhere.
fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The largest file read for a scene, in bytes (`SETTEE_MAX_FILE_SIZE`, else 1 GiB).
pub fn max_file_size() -> u64 {
    env_size(MAX_FILE_SIZE_ENV, DEFAULT_MAX_FILE_SIZE)
}

fn human(bytes: u128) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.1} {}", units[u])
    }
}

/// Checks that `count` elements of `bytes_each` bytes fit in the memory budget, before they are
/// allocated. `what` names the allocation for the message (`"SparseGridTopology grid cells"`).
/// The error carries no position: callers attach the Data's or the component's.
pub fn check(count: u128, bytes_each: u128, what: &str) -> SimResult {
    let total = count.saturating_mul(bytes_each);
    let budget = memory_budget() as u128;
    if total > budget {
        return Err(SimError::new(format!("{what}: {count} elements would need {} (memory budget {})", human(total), human(budget))).hint(format!(
            "reduce the size in the scene, or raise the budget with {MEMORY_BUDGET_ENV}=<bytes, e.g. 16G> if the machine has the memory"
        )));
    }
    Ok(())
}

/// Same as [`check`] with a plain message, for code paths whose errors are strings.
pub fn check_msg(count: u128, bytes_each: u128, what: &str) -> Result<(), String> {
    check(count, bytes_each, what).map_err(|e| match &e.0.hint {
        Some(h) => format!("{}; {h}", e.0.message),
        None => e.0.message.clone(),
    })
}

/// Reads a whole file named by a scene, refusing what is not a regular file (`/dev/zero`, a
/// directory, a pipe) and files larger than [`max_file_size`], without reading more than the
/// bound. The errors do not repeat the path: callers name the file as they did for `fs::read`.
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let limit = max_file_size();
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > limit {
        return Err(too_large(meta.len() as u128, limit));
    }
    let f = std::fs::File::open(path)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    f.take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(too_large(out.len() as u128, limit));
    }
    Ok(out)
}

fn too_large(size: u128, limit: u64) -> std::io::Error {
    std::io::Error::other(format!("{} or more, above the file-size bound of {} ({MAX_FILE_SIZE_ENV} raises it)", human(size), human(limit as u128)))
}

/// [`read_file`] as UTF-8 text.
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    let bytes = read_file(path)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("1.5K"), Some(1536));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("-1G"), None);
    }

    #[test]
    fn over_budget_is_an_error_naming_the_allocation() {
        assert!(check(1000, 8, "small").is_ok());
        let e = check(u64::MAX as u128, 24, "grid cells").unwrap_err();
        assert!(e.0.message.contains("grid cells"), "{}", e.0.message);
        assert!(e.0.hint.as_deref().unwrap_or("").contains(MEMORY_BUDGET_ENV));
    }

    #[test]
    fn device_files_are_refused_quickly() {
        let t = std::time::Instant::now();
        let e = read_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(t.elapsed().as_secs() < 1);
        assert!(read_file(Path::new("/nonexistent/settee")).is_err());
    }
}
