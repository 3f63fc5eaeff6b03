//! What the renderer's integration tests share: PDFs read back with poppler and qpdf, and
//! the same text printed by headless Chromium.
//!
//! The tools are required: without poppler-utils, qpdf and chromium these tests fail, they
//! never skip.

#![expect(dead_code, reason = "each test file uses some of these")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A temporary file, removed on drop.
pub(crate) struct TempFile(pub(crate) PathBuf);

impl TempFile {
    pub(crate) fn new(extension: &str, contents: &[u8]) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "billable-renderer-{}-{}.{extension}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, contents).unwrap();
        Self(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `tool` with `args`, then `file`, then `extra`, and returns its standard output.
pub(crate) fn run_on(tool: &str, args: &[&str], file: &Path, extra: &[&str]) -> Vec<u8> {
    let output = Command::new(tool).args(args).arg(file).args(extra).output().unwrap_or_else(|error| {
        panic!(
            "cannot run `{tool}` ({error}): these tests need poppler-utils, qpdf and chromium \
             (apt-get install -y poppler-utils qpdf chromium)"
        )
    });
    assert!(output.status.success(), "{tool} {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// Runs `tool` with `args` on `pdf` (and `extra` after the file) and returns its output.
pub(crate) fn run(tool: &str, args: &[&str], pdf: &[u8], extra: &[&str]) -> String {
    let file = TempFile::new("pdf", pdf);
    String::from_utf8(run_on(tool, args, &file.0, extra)).unwrap()
}

/// The text laid out as on the page.
pub(crate) fn layout_text(pdf: &[u8]) -> String {
    run("pdftotext", &["-layout", "-enc", "UTF-8"], pdf, &["-"])
}

pub(crate) fn page_text(pdf: &[u8], page: usize) -> String {
    let page = page.to_string();
    run("pdftotext", &["-layout", "-enc", "UTF-8", "-f", &page, "-l", &page], pdf, &["-"])
}

/// The text in reading order with all whitespace folded to single spaces, so that a
/// wrapped description reads whole.
pub(crate) fn folded_text(pdf: &[u8]) -> String {
    run("pdftotext", &["-raw", "-enc", "UTF-8"], pdf, &["-"]).split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn pages_of(pdf: &[u8]) -> usize {
    let info = run("pdfinfo", &[], pdf, &[]);
    let line = info.lines().find(|line| line.starts_with("Pages:")).unwrap();
    line["Pages:".len()..].trim().parse().unwrap()
}

pub(crate) fn assert_valid(pdf: &[u8]) {
    assert!(pdf.starts_with(b"%PDF-"));
    let check = run("qpdf", &["--check"], pdf, &[]);
    assert!(check.contains("No syntax or stream encoding errors found"), "qpdf --check:\n{check}");
}

/// The cells of a line of `pdftotext -layout` output: runs separated by two spaces or more.
pub(crate) fn cells(line: &str) -> Vec<&str> {
    line.split("  ").map(str::trim).filter(|cell| !cell.is_empty()).collect()
}

/// The PDF that headless Chromium prints of `html`, as HTML-to-PDF invoicing tools make
/// theirs.
pub(crate) fn chromium_pdf(html: &str) -> Vec<u8> {
    let page = TempFile::new("html", html.as_bytes());
    let pdf = TempFile::new("pdf", b"");
    let profile = std::env::temp_dir().join(format!("billable-chromium-{}", std::process::id()));
    run_on(
        "chromium",
        &[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--print-to-pdf={}", pdf.0.display()),
        ],
        &page.0,
        &[],
    );
    let _ = std::fs::remove_dir_all(profile);
    std::fs::read(&pdf.0).unwrap()
}

/// The lines of text `pdftotext` reads from `pdf`, in its default reading order, without
/// the embedding marks it wraps right-to-left runs in (where it puts them depends on how a
/// line's runs were drawn, not on what they say), trimmed, empty lines left out.
pub(crate) fn text_lines(pdf: &[u8]) -> Vec<String> {
    run("pdftotext", &["-enc", "UTF-8"], pdf, &["-"])
        .lines()
        .map(|line| {
            line.chars()
                .filter(|c| !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
                .collect::<String>()
        })
        .map(|line| line.trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}
