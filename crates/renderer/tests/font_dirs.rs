//! `BILLABLE_PDF_FONT_DIRS`: fonts in the directories it names come before the system's.
//!
//! The fallback fonts are found once per process, so the configured case runs in a child
//! process of this test binary with the variable set.

#![expect(clippy::unwrap_used, reason = "tests")]

mod support;

use std::process::Command;

use renderer::{FONT_DIRS_VARIABLE, multilingual_document, render_pdf};
use support::run;

/// Noto Serif CJK of Debian's `fonts-noto-cjk`: what the configured directory holds. The
/// system's fonts give Noto Sans CJK first.
const SERIF_CJK: &str = "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc";

/// The names of the fonts embedded in the multilingual invoice.
fn embedded_fonts() -> String {
    run("pdffonts", &[], &render_pdf(&multilingual_document(12, false)).unwrap(), &[])
}

#[test]
fn a_configured_font_directory_comes_before_the_systems_fonts() {
    assert!(std::env::var_os(FONT_DIRS_VARIABLE).is_none(), "run without {FONT_DIRS_VARIABLE}");
    let system = embedded_fonts();
    assert!(system.contains("NotoSansCJKjp-Regular") && !system.contains("NotoSerifCJK"), "{system}");

    let dir = std::env::temp_dir().join(format!("billable-font-dirs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _ = std::fs::remove_file(dir.join("serif.ttc"));
    // A link or a copy, not a symlink: fontdb reads a symlink as the file it points to,
    // which is not in the configured directory.
    let serif = dir.join("serif.ttc");
    std::fs::hard_link(SERIF_CJK, &serif).or_else(|_| std::fs::copy(SERIF_CJK, &serif).map(drop)).unwrap();
    let missing = std::env::temp_dir().join("billable-no-such-font-dir");
    let dirs = std::env::join_paths([&missing, &dir]).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "with_the_configured_directory", "--nocapture"])
        .env(FONT_DIRS_VARIABLE, dirs)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let said = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "{said}{}", String::from_utf8_lossy(&child.stderr));
    assert!(said.contains("1 passed"), "the child test ran: {said}");
}

#[test]
#[ignore = "run by a_configured_font_directory_comes_before_the_systems_fonts, with the variable set"]
fn with_the_configured_directory() {
    assert!(std::env::var_os(FONT_DIRS_VARIABLE).is_some(), "{FONT_DIRS_VARIABLE} must be set");
    let configured = embedded_fonts();
    // The regular text's CJK comes from the configured face. (Bold text keeps the system's
    // bold face: within a family the nearest weight wins, and the directory has no bold.)
    assert!(
        configured.contains("NotoSerifCJKjp-Regular") && !configured.contains("NotoSansCJKjp-Regular"),
        "{configured}"
    );
}
