//! Fallback fonts: where a character the embedded faces lack is taken from.
//!
//! The candidates are the fonts in `BILLABLE_PDF_FONT_DIRS` (directories separated by `:`,
//! searched first, in their order) and then the system's fonts, as fontconfig's directories
//! list them (`fontdb`). Of each family only the upright face nearest the wanted weight is
//! a candidate; sans-serif families come before serif, UI, monospaced and other ones, then
//! families by name, so a choice never depends on the order a directory lists its files.
//! CJK text prefers the Japanese, then the Korean, Simplified and Traditional Chinese
//! faces of Noto Sans CJK, as Debian's fontconfig ranks them.
//!
//! Nothing is read until the first character the embedded faces lack: an invoice in Latin,
//! Greek, Cyrillic, Hebrew or Arabic never scans the system's fonts. The scan (each
//! candidate's character map, as ranges) is done once per process; a face is loaded once,
//! on its first use, and kept.

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex, PoisonError};

use super::font::{Face, Weight};

/// The environment variable naming extra font directories, searched before the system's.
pub const FONT_DIRS_VARIABLE: &str = "BILLABLE_PDF_FONT_DIRS";

static FALLBACK: LazyLock<Fallback> = LazyLock::new(Fallback::scan);

/// The face to draw `c` in at `weight` when the embedded faces have no glyph for it:
/// the first candidate that has one, or `None` when no font on this machine does.
pub(super) fn face_for(c: char, weight: Weight) -> Option<&'static Face> {
    FALLBACK.face_for(c, weight)
}

/// Every font the search looks at, and what was chosen and loaded so far.
struct Fallback {
    db: fontdb::Database,
    /// Candidates in order of preference, per weight.
    regular: Vec<Candidate>,
    bold: Vec<Candidate>,
    chosen: Mutex<HashMap<(char, Weight), Option<&'static Face>>>,
    loaded: Mutex<HashMap<fontdb::ID, &'static Face>>,
}

/// A face that may provide characters, with the characters it has.
struct Candidate {
    id: fontdb::ID,
    name: String,
    coverage: Vec<RangeInclusive<u32>>,
}

impl Candidate {
    fn has(&self, c: char) -> bool {
        let c = u32::from(c);
        self.coverage
            .binary_search_by(|range| {
                if *range.end() < c {
                    std::cmp::Ordering::Less
                } else if *range.start() > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }
}

/// The configured extra directories, in their order.
fn configured_dirs() -> Vec<PathBuf> {
    std::env::var_os(FONT_DIRS_VARIABLE)
        .map(|dirs| std::env::split_paths(&dirs).filter(|dir| !dir.as_os_str().is_empty()).collect())
        .unwrap_or_default()
}

impl Fallback {
    fn scan() -> Self {
        let started = std::time::Instant::now();
        let dirs = configured_dirs();
        let mut db = fontdb::Database::new();
        for dir in &dirs {
            db.load_fonts_dir(dir);
        }
        db.load_system_fonts();
        let regular = candidates(&db, &dirs, Weight::Regular);
        let bold = candidates(&db, &dirs, Weight::Bold);
        tracing::debug!(
            faces = db.len(),
            candidates = regular.len(),
            elapsed_ms = started.elapsed().as_millis(),
            "scanned fallback fonts"
        );
        Self { db, regular, bold, chosen: Mutex::default(), loaded: Mutex::default() }
    }

    fn face_for(&self, c: char, weight: Weight) -> Option<&'static Face> {
        if let Some(known) = self.chosen.lock().unwrap_or_else(PoisonError::into_inner).get(&(c, weight)) {
            return *known;
        }
        let candidates = match weight {
            Weight::Regular => &self.regular,
            Weight::Bold => &self.bold,
        };
        let face = candidates
            .iter()
            .filter(|candidate| candidate.has(c))
            .find_map(|candidate| self.load(candidate, weight));
        self.chosen.lock().unwrap_or_else(PoisonError::into_inner).insert((c, weight), face);
        face
    }

    /// The candidate's face, loaded on first use and kept for the life of the process (a
    /// few faces, each read once: the PDF embeds a subset of it per invoice).
    fn load(&self, candidate: &Candidate, weight: Weight) -> Option<&'static Face> {
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(face) = loaded.get(&candidate.id) {
            return Some(*face);
        }
        let (data, index) = self.db.with_face_data(candidate.id, |data, index| (data.to_vec(), index))?;
        let data: &'static [u8] = Vec::leak(data);
        match Face::load(&candidate.name, data, index, weight) {
            Ok(face) => {
                let face: &'static Face = Box::leak(Box::new(face));
                loaded.insert(candidate.id, face);
                Some(face)
            }
            Err(error) => {
                tracing::warn!(%error, "cannot use a fallback font");
                None
            }
        }
    }
}

/// The faces of `db` worth asking for a character at `weight`, best first.
fn candidates(db: &fontdb::Database, dirs: &[PathBuf], weight: Weight) -> Vec<Candidate> {
    // One face per family: upright, the weight nearest the wanted one.
    let mut best: HashMap<&str, &fontdb::FaceInfo> = HashMap::new();
    for face in db.faces() {
        if face.style != fontdb::Style::Normal {
            continue;
        }
        let Some((family, _)) = face.families.first() else { continue };
        let distance = |face: &fontdb::FaceInfo| face.weight.0.abs_diff(weight.class());
        best.entry(family.as_str())
            .and_modify(|kept| {
                if (distance(face), dir_rank(face, dirs)) < (distance(kept), dir_rank(kept, dirs)) {
                    *kept = face;
                }
            })
            .or_insert(face);
    }
    let mut faces: Vec<(&str, &fontdb::FaceInfo)> = best.into_iter().collect();
    faces.sort_by_key(|(family, face)| (dir_rank(face, dirs), family_rank(family), *family));
    faces
        .into_iter()
        .filter_map(|(family, face)| {
            let coverage = db.with_face_data(face.id, coverage)?;
            (!coverage.is_empty()).then(|| Candidate { id: face.id, name: family.to_owned(), coverage })
        })
        .collect()
}

/// Faces from the configured directories first, in the directories' order.
fn dir_rank(face: &fontdb::FaceInfo, dirs: &[PathBuf]) -> usize {
    let path = match &face.source {
        fontdb::Source::File(path) | fontdb::Source::SharedFile(path, _) => path,
        fontdb::Source::Binary(_) => return dirs.len(),
    };
    dirs.iter().position(|dir| path.starts_with(dir)).unwrap_or(dirs.len())
}

/// Sans-serif families first, then serif, then UI, display and monospaced variants; among
/// Noto's CJK families, Japanese, Korean, Simplified and Traditional Chinese in that order.
fn family_rank(family: &str) -> (u8, u8) {
    let has = |word: &str| family.split_whitespace().any(|part| part == word);
    let style = if has("Mono") || family.contains("Mono") {
        4
    } else if has("UI") || has("Display") {
        3
    } else if has("Serif") {
        2
    } else {
        u8::from(!has("Sans"))
    };
    let region = ["JP", "KR", "SC", "TC", "HK"].iter().position(|region| has(region)).unwrap_or(0);
    (style, u8::try_from(region).unwrap_or(u8::MAX))
}

/// The characters a face has, as sorted, merged ranges of code points.
fn coverage(data: &[u8], index: u32) -> Vec<RangeInclusive<u32>> {
    let Ok(face) = rustybuzz::ttf_parser::Face::parse(data, index) else { return Vec::new() };
    let mut points = Vec::new();
    if let Some(cmap) = face.tables().cmap {
        for subtable in cmap.subtables {
            if subtable.is_unicode() {
                subtable.codepoints(|c| points.push(c));
            }
        }
    }
    points.sort_unstable();
    points.dedup();
    let mut ranges: Vec<RangeInclusive<u32>> = Vec::new();
    for c in points {
        match ranges.last_mut() {
            Some(last) if *last.end() + 1 == c => *last = *last.start()..=c,
            _ => ranges.push(c..=c),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sans_serif_families_come_first_and_japanese_among_cjk() {
        let mut families =
            ["Noto Serif Thai", "Noto Sans Mono", "Noto Sans Thai UI", "Noto Sans Thai", "Noto Kufi Arabic"];
        families.sort_by_key(|family| family_rank(family));
        assert_eq!(
            families,
            ["Noto Sans Thai", "Noto Kufi Arabic", "Noto Serif Thai", "Noto Sans Thai UI", "Noto Sans Mono"]
        );
        let mut cjk = ["Noto Sans CJK SC", "Noto Sans CJK HK", "Noto Sans CJK JP", "Noto Sans CJK KR"];
        cjk.sort_by_key(|family| family_rank(family));
        assert_eq!(cjk, ["Noto Sans CJK JP", "Noto Sans CJK KR", "Noto Sans CJK SC", "Noto Sans CJK HK"]);
    }

    #[test]
    fn coverage_is_merged_ranges_of_the_character_map() {
        let ranges = coverage(include_bytes!("../../fonts/DejaVuSans.ttf"), 0);
        assert!(ranges.windows(2).all(|pair| pair[0].end() + 1 < *pair[1].start()), "sorted and merged");
        let candidate =
            Candidate { id: fontdb::ID::dummy(), name: "DejaVu Sans".to_owned(), coverage: ranges };
        assert!(candidate.has('A') && candidate.has('ж') && !candidate.has('山'));
    }
}
