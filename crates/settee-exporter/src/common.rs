//! What the observer components share: output files (plain or gzip-compressed, as SOFA picks by
//! the `.gz` ending), reading them back, and the context mechanical state.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use settee_core::role;
use settee_core::{ComponentId, NodeId, Scene};

/// An output file: gzip-compressed when its name ends in `.gz`.
pub enum Output {
    Plain(BufWriter<File>),
    Gz(GzEncoder<BufWriter<File>>),
    /// The output of a copy of its component (a cloned scene, a snapshot): it writes nothing,
    /// since the file belongs to the original, until a restore hands it the file back
    /// ([`Output::take_over`]).
    Detached,
}

/// A copy is [`Output::Detached`]: two components never write into one file.
impl Clone for Output {
    fn clone(&self) -> Self {
        Output::Detached
    }
}

impl Output {
    /// Creates (truncates) `path`, creating its directory when missing.
    pub fn create(path: &Path) -> io::Result<Output> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let f = BufWriter::new(File::create(path)?);
        Ok(if is_gz(path) { Output::Gz(GzEncoder::new(f, flate2::Compression::default())) } else { Output::Plain(f) })
    }

    /// Writes the compressed stream's trailer and flushes.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Output::Plain(mut f) => f.flush(),
            Output::Gz(g) => g.finish()?.flush(),
            Output::Detached => Ok(()),
        }
    }

    /// Goes on writing into the file `other` had (a restored component takes over the file of
    /// the one it replaces); `other` is left detached.
    pub fn take_over(&mut self, other: &mut Output) {
        *self = std::mem::replace(other, Output::Detached);
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Plain(f) => f.write(buf),
            Output::Gz(g) => g.write(buf),
            Output::Detached => Ok(buf.len()),
        }
    }
    /// A gzip stream is sync-flushed: what was written so far can be read back while the run
    /// goes on (SOFA's `gzflush(Z_SYNC_FLUSH)`).
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Plain(f) => f.flush(),
            Output::Gz(g) => g.flush(),
            Output::Detached => Ok(()),
        }
    }
}

pub fn is_gz(path: &Path) -> bool {
    path.to_string_lossy().ends_with(".gz")
}

/// The whole text of a file, decompressed when its name ends in `.gz`.
pub fn read_text(path: &Path) -> io::Result<String> {
    let mut s = String::new();
    if is_gz(path) {
        MultiGzDecoder::new(File::open(path)?).read_to_string(&mut s)?;
    } else {
        File::open(path)?.read_to_string(&mut s)?;
    }
    Ok(s)
}

/// The mechanical state a component of `node` observes: the node's own, else the nearest
/// ancestor's (SOFA's `getContext()->getMechanicalState()`).
pub fn context_state(scene: &Scene, node: NodeId) -> Option<ComponentId> {
    scene.context_state(node).filter(|c| scene.entry(*c).plays(role::MECHANICAL_STATE))
}

/// Appends `values` in SOFA's default stream format (`%g`, 6 significant digits), separated by
/// single spaces.
pub fn push_g6(out: &mut String, values: &[f64]) {
    settee_core::gformat::write_g6_list(out, values);
}
