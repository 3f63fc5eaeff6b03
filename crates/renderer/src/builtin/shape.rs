//! Text as it is drawn: ordered by the Unicode Bidirectional Algorithm, set in the embedded
//! face or, character by character, a fallback face that has the glyph, and shaped by
//! `rustybuzz` (the algorithm of `HarfBuzz`: ligatures, joining, marks, conjuncts, kerning).
//!
//! Every width comes from the shaped glyphs, so the width measured is the width drawn:
//! right-aligned numbers end on one edge to the point. A character no font has is drawn as
//! U+FFFD (a visible placeholder that still copies as the original character) and
//! reported in [`Shaped::missing`], never as a silent `.notdef`.

use std::ops::Range;

use krilla::text::{GlyphId, KrillaGlyph};
use unicode_bidi::{BidiClass, BidiInfo, Level};
use unicode_script::{Script, UnicodeScript};
use unicode_segmentation::UnicodeSegmentation;

use super::fallback;
use super::font::Face;

/// The character drawn for one that no font has.
const PLACEHOLDER: char = '\u{FFFD}';

/// A line's text with the direction of its paragraph, as wrapping leaves it: a line of a
/// right-to-left paragraph is ordered and aligned as one, whatever its own first letter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TextLine {
    pub(super) text: String,
    pub(super) rtl: bool,
}

/// One line, shaped and in visual order, ready to draw.
#[derive(Debug, Clone)]
pub(super) struct Shaped {
    /// The line's text in logical (memory) order; glyphs map back to ranges of it.
    pub(super) text: String,
    /// Runs of one face and one direction, left to right on the page.
    pub(super) runs: Vec<Run>,
    /// The line's width in em.
    pub(super) advance: f32,
    /// Whether the paragraph's base direction is right to left: such a line is aligned to
    /// the right of its column.
    pub(super) rtl: bool,
    /// Characters no font on this machine has, drawn as placeholders.
    pub(super) missing: Vec<char>,
}

/// Glyphs of one face, placed from `offset` em after the line's left end.
#[derive(Debug, Clone)]
pub(super) struct Run {
    pub(super) face: &'static Face,
    pub(super) glyphs: Vec<KrillaGlyph>,
    pub(super) offset: f32,
}

impl Shaped {
    pub(super) fn width(&self, size: f32) -> f32 {
        self.advance * size
    }
}

/// Shapes `text` as one line, `primary` being the face it is set in. `rtl` gives the
/// paragraph's base direction; `None` takes it from the first strong character (rules P2
/// and P3 of the bidirectional algorithm).
pub(super) fn shape(text: &str, primary: &'static Face, rtl: Option<bool>) -> Shaped {
    let (base_rtl, runs) = visual_runs(text, rtl);
    let mut shaped =
        Shaped { text: text.to_owned(), runs: Vec::new(), advance: 0.0, rtl: base_rtl, missing: Vec::new() };
    for (range, run_rtl) in runs {
        let mut items = itemize(text, range, primary);
        if run_rtl {
            items.reverse();
        }
        for (range, choice) in items {
            let glyphs = match choice {
                Choice::Face(face) => shape_item(text, range, face, run_rtl),
                Choice::Missing => {
                    shaped.missing.extend(text[range.clone()].chars().filter(|c| !ignorable(*c)));
                    placeholder(text, primary, range)
                }
            };
            let face = match choice {
                Choice::Face(face) => face,
                Choice::Missing => primary,
            };
            let advance: f32 = glyphs.iter().map(|glyph| glyph.x_advance).sum();
            shaped.runs.push(Run { face, glyphs, offset: shaped.advance });
            shaped.advance += advance;
        }
    }
    shaped
}

/// Whether `text` holds anything the bidirectional algorithm would reorder.
fn has_rtl(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(
            unicode_bidi::bidi_class(c),
            BidiClass::R
                | BidiClass::AL
                | BidiClass::AN
                | BidiClass::RLE
                | BidiClass::RLO
                | BidiClass::RLI
                | BidiClass::FSI
        )
    })
}

/// The level runs of `text` in visual order, each with whether it runs right to left, and
/// the base direction. Left-to-right text without any right-to-left character skips the
/// algorithm: it is one run.
fn visual_runs(text: &str, rtl: Option<bool>) -> (bool, Vec<(Range<usize>, bool)>) {
    if rtl != Some(true) && !has_rtl(text) {
        return (false, vec![(0..text.len(), false)]);
    }
    let base = rtl.map(|rtl| if rtl { Level::rtl() } else { Level::ltr() });
    let info = BidiInfo::new(text, base);
    let base_rtl = info.paragraphs.first().is_some_and(|paragraph| paragraph.level.is_rtl());
    let mut runs = Vec::new();
    for paragraph in &info.paragraphs {
        let (levels, level_runs) = info.visual_runs(paragraph, paragraph.range.clone());
        runs.extend(level_runs.into_iter().map(|run| {
            let rtl = levels[run.start].is_rtl();
            (run, rtl)
        }));
    }
    (base_rtl, runs)
}

#[derive(Debug, Clone, Copy)]
enum Choice {
    Face(&'static Face),
    Missing,
}

impl Choice {
    fn same(self, other: Choice) -> bool {
        match (self, other) {
            (Choice::Face(a), Choice::Face(b)) => std::ptr::eq(a, b),
            (Choice::Missing, Choice::Missing) => true,
            _ => false,
        }
    }
}

/// Characters that take the face of their neighbours: joiners, variation selectors, bidi
/// controls and the like have no glyph of their own.
fn ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// `range` of `text` cut into runs of one face and one script, in logical order (a shaper
/// applies one script's rules to a run). A grapheme stays whole, in the primary face when
/// it has every character of it, else in the first fallback face that has its first
/// character the primary lacks. Spaces, digits and punctuation belong to the run they are in.
fn itemize(text: &str, range: Range<usize>, primary: &'static Face) -> Vec<(Range<usize>, Choice)> {
    let mut items: Vec<(Range<usize>, Choice)> = Vec::new();
    let mut item_script = Script::Common;
    for (at, grapheme) in text[range.clone()].grapheme_indices(true) {
        let start = range.start + at;
        let end = start + grapheme.len();
        let lacking = grapheme.chars().find(|c| !ignorable(*c) && !primary.has(*c));
        let choice = match lacking {
            None => Choice::Face(primary),
            Some(c) => fallback::face_for(c, primary.weight).map_or(Choice::Missing, Choice::Face),
        };
        let script = grapheme.chars().next().map_or(Script::Common, |c| c.script());
        let neutral = matches!(script, Script::Common | Script::Inherited | Script::Unknown);
        let same_script = neutral || item_script == Script::Common || script == item_script;
        match items.last_mut() {
            Some((last, kept)) if kept.same(choice) && same_script => last.end = end,
            _ => {
                items.push((start..end, choice));
                item_script = Script::Common;
            }
        }
        if !neutral {
            item_script = script;
        }
    }
    items
}

/// Shapes `range` of `text` in `face`: glyphs in visual order, each mapped to the range of
/// `text` its cluster stands for.
fn shape_item(text: &str, range: Range<usize>, face: &Face, rtl: bool) -> Vec<KrillaGlyph> {
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(&text[range.clone()]);
    // The text around the item, so that letters join across a change of face.
    buffer.set_pre_context(&text[..range.start]);
    buffer.set_post_context(&text[range.end..]);
    buffer.set_direction(if rtl {
        rustybuzz::Direction::RightToLeft
    } else {
        rustybuzz::Direction::LeftToRight
    });
    buffer.guess_segment_properties();
    let output = rustybuzz::shape(face.shaper(), &[], buffer);

    // Where each cluster ends: at the next cluster's start, in logical order.
    let mut starts: Vec<usize> = output.glyph_infos().iter().map(cluster).collect();
    starts.sort_unstable();
    starts.dedup();
    let end_of = |start: usize| {
        let next = starts.partition_point(|&s| s <= start);
        starts.get(next).copied().unwrap_or(range.len())
    };
    let scale = face.scale();
    output
        .glyph_infos()
        .iter()
        .zip(output.glyph_positions())
        .map(|(info, position)| {
            let start = cluster(info);
            KrillaGlyph::new(
                GlyphId::new(info.glyph_id),
                units(position.x_advance) * scale,
                units(position.x_offset) * scale,
                units(position.y_offset) * scale,
                units(position.y_advance) * scale,
                range.start + start..range.start + end_of(start),
                None,
            )
        })
        .collect()
}

fn cluster(info: &rustybuzz::GlyphInfo) -> usize {
    usize::try_from(info.cluster).unwrap_or(usize::MAX)
}

/// A position in font units as a float. Positions fit an `i16` (fonts have at most 16,384
/// units per em); a larger one is clamped rather than cast.
fn units(value: i32) -> f32 {
    let clamped = value.clamp(i32::from(i16::MIN), i32::from(i16::MAX));
    f32::from(i16::try_from(clamped).unwrap_or_default())
}

/// One placeholder glyph per grapheme of `range`, each copying as the grapheme it replaces.
fn placeholder(text: &str, primary: &Face, range: Range<usize>) -> Vec<KrillaGlyph> {
    let Some((glyph, advance)) = primary.glyph(PLACEHOLDER) else { return Vec::new() };
    text[range.clone()]
        .grapheme_indices(true)
        .map(|(at, grapheme)| {
            let start = range.start + at;
            KrillaGlyph::new(
                GlyphId::new(u32::from(glyph)),
                advance,
                0.0,
                0.0,
                0.0,
                start..start + grapheme.len(),
                None,
            )
        })
        .collect()
}

/// The width in em of every logical range of one paragraph, from one shaping of it: the
/// advance of each cluster is counted at the cluster's first byte.
pub(super) struct Measured {
    /// `prefix[i]`: the advance of the text before byte `i`.
    prefix: Vec<f32>,
    pub(super) rtl: bool,
}

impl Measured {
    pub(super) fn new(text: &str, primary: &'static Face, rtl: Option<bool>) -> Self {
        let shaped = shape(text, primary, rtl);
        let mut advances = vec![0.0_f32; text.len() + 1];
        for glyph in shaped.runs.iter().flat_map(|run| &run.glyphs) {
            if let Some(advance) = advances.get_mut(glyph.text_range.start) {
                *advance += glyph.x_advance;
            }
        }
        let mut prefix = Vec::with_capacity(advances.len());
        let mut sum = 0.0;
        for advance in advances {
            prefix.push(sum);
            sum += advance;
        }
        Self { prefix, rtl: shaped.rtl }
    }

    /// The width in em of `range` of the text.
    pub(super) fn width(&self, range: Range<usize>) -> f32 {
        self.prefix.get(range.end).copied().unwrap_or(0.0)
            - self.prefix.get(range.start).copied().unwrap_or(0.0)
    }
}

impl Face {
    /// `text` shaped as one line set in this face, its direction taken from its text.
    pub(super) fn shape(&'static self, text: &str) -> Shaped {
        shape(text, self, None)
    }

    /// The width of `text` on one line at `size` points, as it is drawn.
    pub(super) fn width(&'static self, text: &str, size: f32) -> f32 {
        self.shape(text).width(size)
    }

    /// Lines at most `width` wide: line breaks in `text` are kept, and lines break where
    /// Unicode's line breaking rules (UAX #14) allow, preferring the last place that fits;
    /// a run with no such place is cut between graphemes. Every line keeps the direction of
    /// its paragraph. Never empty.
    pub(super) fn wrap(&'static self, text: &str, size: f32, width: f32) -> Vec<TextLine> {
        let limit = width / size;
        let mut lines = Vec::new();
        for paragraph in text.lines() {
            // Runs of blanks print as one space, as before any break is chosen.
            let paragraph = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
            let measured = Measured::new(&paragraph, self, None);
            let rtl = measured.rtl;
            let fits = |range: Range<usize>| measured.width(trim_end(&paragraph, range)) <= limit;
            let mut push = |range: Range<usize>| {
                lines.push(TextLine { text: paragraph[trim_end(&paragraph, range)].to_owned(), rtl });
            };
            // The current line runs from `start` to `end`, a place it may break.
            let (mut start, mut end) = (0, 0);
            for (next, _) in unicode_linebreak::linebreaks(&paragraph) {
                if fits(start..next) {
                    end = next;
                    continue;
                }
                if end > start {
                    push(start..end);
                    start = end;
                }
                if !fits(start..next) {
                    // Wider than a line on its own: cut between graphemes.
                    let from = start;
                    for (at, grapheme) in paragraph[from..next].grapheme_indices(true) {
                        let cut = from + at;
                        if cut > start && measured.width(start..cut + grapheme.len()) > limit {
                            push(start..cut);
                            start = cut;
                        }
                    }
                }
                end = next;
            }
            push(start..end);
        }
        // Trailing blank lines print nothing but would take room.
        while lines.len() > 1 && lines.last().is_some_and(|line| line.text.is_empty()) {
            lines.pop();
        }
        if lines.is_empty() {
            lines.push(TextLine { text: String::new(), rtl: false });
        }
        lines
    }

    /// `text` on one line at most `width` wide, cut with an ellipsis if need be.
    pub(super) fn truncate(&'static self, text: &str, size: f32, width: f32) -> String {
        let measured = Measured::new(text, self, None);
        let limit = width / size;
        if measured.width(0..text.len()) <= limit {
            return text.to_owned();
        }
        let room = limit - self.width("…", 1.0);
        let mut end = 0;
        for (at, grapheme) in text.grapheme_indices(true) {
            if measured.width(0..at + grapheme.len()) > room {
                break;
            }
            end = at + grapheme.len();
        }
        format!("{}…", text[..end].trim_end())
    }
}

/// `range` of `text` without its trailing whitespace.
fn trim_end(text: &str, range: Range<usize>) -> Range<usize> {
    range.start..range.start + text[range].trim_end().len()
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::builtin::font::Fonts;

    fn regular() -> &'static Face {
        &Fonts::get().unwrap().regular
    }

    fn texts(lines: &[TextLine]) -> Vec<&str> {
        lines.iter().map(|line| line.text.as_str()).collect()
    }

    /// The faces a shaped line is drawn in, left to right.
    fn faces(shaped: &Shaped) -> Vec<&str> {
        shaped.runs.iter().map(|run| run.face.name.as_str()).collect()
    }

    #[test]
    fn wrapped_lines_fit_and_keep_every_word() {
        let text = "Backend development: invoicing, PDF rendering and the time tracking API, \
                    reviewed with the client's team over three rounds";
        let lines = regular().wrap(text, 9.5, 150.0);
        assert!(lines.len() > 1);
        for line in &lines {
            assert!(regular().width(&line.text, 9.5) <= 150.0, "{line:?} is too wide");
        }
        assert_eq!(texts(&lines).join(" "), text.split_whitespace().collect::<Vec<_>>().join(" "));
    }

    #[test]
    fn cjk_wraps_between_ideographs_and_keeps_closing_punctuation_on_its_line() {
        let text = "山田商事様、十一月分のご請求です。お支払いは十四日以内にお願いいたします。ありがとうございました。";
        let lines = regular().wrap(text, 9.5, 120.0);
        assert!(lines.len() > 1, "{lines:?}");
        assert_eq!(texts(&lines).concat(), text, "nothing lost, nothing added");
        for line in &lines {
            assert!(regular().width(&line.text, 9.5) <= 120.0, "{line:?} is too wide");
            assert!(
                !line.text.starts_with(['、', '。']),
                "{line:?}: a line never starts with closing punctuation"
            );
        }
    }

    #[test]
    fn mixed_text_breaks_at_spaces_before_it_breaks_words() {
        let text = "Invoice for 山田商事 covering consultation and implementation";
        let lines = regular().wrap(text, 9.5, 110.0);
        assert!(lines.len() > 1);
        let words: Vec<&str> = lines.iter().flat_map(|line| line.text.split(' ')).collect();
        for word in ["Invoice", "consultation", "implementation"] {
            assert!(words.contains(&word), "{word} kept whole: {lines:?}");
        }
    }

    #[test]
    fn a_long_run_without_breaks_is_cut_between_graphemes_only() {
        // Thai has no spaces between words and combining marks on its letters: a cut may
        // fall only where a reader sees one character end.
        let text = "ภาษาไทยที่ยาวมากโดยไม่มีช่องว่างระหว่างคำเพื่อทดสอบการตัดบรรทัด".repeat(3);
        let lines = regular().wrap(&text, 9.5, 80.0);
        assert!(lines.len() > 1);
        assert_eq!(texts(&lines).concat(), text);
        for line in &lines[1..] {
            let first = line.text.chars().next().unwrap();
            let mark = first == '\u{0E31}'
                || ('\u{0E34}'..='\u{0E3A}').contains(&first)
                || ('\u{0E47}'..='\u{0E4E}').contains(&first);
            assert!(!mark, "{line:?} starts with a combining mark");
        }
    }

    #[test]
    fn a_word_longer_than_the_line_is_broken() {
        let word = "x".repeat(200);
        let lines = regular().wrap(&word, 9.5, 100.0);
        assert!(lines.len() > 1);
        assert_eq!(texts(&lines).concat(), word);
        assert!(lines.iter().all(|line| regular().width(&line.text, 9.5) <= 100.0));
    }

    #[test]
    fn line_breaks_are_kept_and_trailing_blank_lines_dropped() {
        assert_eq!(texts(&regular().wrap("one\n\ntwo\n\n", 9.5, 500.0)), ["one", "", "two"]);
        assert_eq!(texts(&regular().wrap("", 9.5, 500.0)), [""]);
    }

    #[test]
    fn truncation_ends_in_an_ellipsis_within_the_width() {
        let cut = regular().truncate(&"Billable Studio GmbH ".repeat(20), 8.0, 120.0);
        assert!(cut.ends_with('…'));
        assert!(regular().width(&cut, 8.0) <= 120.0);
        assert_eq!(regular().truncate("short", 8.0, 120.0), "short");
    }

    #[test]
    fn kerning_moves_glyphs_and_the_width_is_the_drawn_one() {
        let shaped = regular().shape("AV To");
        let advance: f32 = shaped.runs.iter().flat_map(|run| &run.glyphs).map(|glyph| glyph.x_advance).sum();
        assert!((advance - shaped.advance).abs() < 1e-5);
        let apart = regular().width("A", 10.0) + regular().width("V", 10.0);
        assert!(regular().width("AV", 10.0) < apart - 0.1, "DejaVu kerns A and V");
    }

    #[test]
    fn hebrew_reads_right_to_left_with_its_numbers_left_to_right() {
        let shaped = regular().shape("חשבונית 2024 מס׳ 17");
        assert!(shaped.rtl);
        // Visual order, left to right: "17", then Hebrew, then "2024", then Hebrew.
        let visual: Vec<&str> = shaped
            .runs
            .iter()
            .flat_map(|run| &run.glyphs)
            .map(|glyph| &shaped.text[glyph.text_range.clone()])
            .collect();
        let digits: String = visual.concat().chars().filter(char::is_ascii_digit).collect();
        assert_eq!(digits, "172024", "numbers keep their own order: {visual:?}");
        assert_eq!(visual.last().copied(), Some("ח"), "the first letter is drawn rightmost: {visual:?}");
        assert!(!regular().shape("Invoice 17").rtl);
    }

    #[test]
    fn arabic_letters_join() {
        // Shaped, the word uses contextual forms, which differ from the isolated letters.
        let word = "مرحبا";
        let joined: Vec<u32> =
            regular().shape(word).runs[0].glyphs.iter().map(|g| g.glyph_id.to_u32()).collect();
        let isolated: Vec<u32> = word.chars().map(|c| u32::from(regular().glyph(c).unwrap().0)).collect();
        assert_eq!(joined.len(), isolated.len());
        let mut reversed = isolated.clone();
        reversed.reverse();
        assert_ne!(joined, reversed, "contextual forms, not isolated letters");
    }

    #[test]
    fn a_character_the_embedded_face_lacks_comes_from_a_system_font() {
        let shaped = regular().shape("Client 山田商事");
        assert!(shaped.missing.is_empty(), "fonts-noto-cjk provides CJK: {shaped:?}");
        let cjk = faces(&shaped);
        assert_eq!(cjk[0], "DejaVu Sans");
        assert!(cjk[1].starts_with("Noto Sans CJK"), "{cjk:?}");
        let thai = regular().shape("ภาษาไทย");
        assert!(thai.missing.is_empty() && faces(&thai) == ["Noto Sans Thai"], "{:?}", faces(&thai));
    }

    #[test]
    fn a_character_no_font_has_is_a_visible_placeholder_that_copies_as_itself() {
        // A code point of the Private Use Area: no font on a clean system draws it.
        let shaped = regular().shape("a\u{F8FF}b");
        assert_eq!(shaped.missing, ['\u{F8FF}']);
        let glyphs: Vec<&KrillaGlyph> = shaped.runs.iter().flat_map(|run| &run.glyphs).collect();
        assert_eq!(glyphs.len(), 3);
        let placeholder = u32::from(regular().glyph(PLACEHOLDER).unwrap().0);
        assert_eq!(glyphs[1].glyph_id.to_u32(), placeholder);
        assert_eq!(&shaped.text[glyphs[1].text_range.clone()], "\u{F8FF}");
    }

    #[test]
    fn hebrew_and_arabic_in_one_run_are_shaped_each_by_its_own_rules() {
        // One right-to-left run, one face: Arabic must still join after Hebrew.
        let mixed = regular().shape("עברית · مرحبا");
        let alone = regular().shape("مرحبا");
        let glyphs = |shaped: &Shaped| -> Vec<u32> {
            shaped.runs.iter().flat_map(|run| &run.glyphs).map(|glyph| glyph.glyph_id.to_u32()).collect()
        };
        let arabic = glyphs(&alone);
        assert!(glyphs(&mixed).starts_with(&arabic), "{:?} then {arabic:?}", glyphs(&mixed));
    }

    #[test]
    fn a_wrapped_rtl_paragraph_keeps_its_direction_on_every_line() {
        let text = "שורה ראשונה של תיאור ארוך עם Backend API ומספרים 1,250.00 EUR בסוף";
        let lines = regular().wrap(text, 9.5, 90.0);
        assert!(lines.len() > 2, "{lines:?}");
        assert!(lines.iter().all(|line| line.rtl), "{lines:?}");
    }
}
