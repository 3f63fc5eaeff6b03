//! Payment QR codes on the page: the EPC QR code beside the payment details, and the Swiss
//! QR-bill's receipt and payment part at the foot of a page (SIX Implementation Guidelines
//! 2.3, section 3: A6 landscape, the receipt 62 mm wide, the code 46 × 46 mm with the Swiss
//! cross). Positions are in PDF points from the top left, as the rest of the layout's.

use billing::document::SwissSlipText;

use super::font::{Weight, one_line};
use super::page::{INK, Modules, Op, PAGE_HEIGHT, PAGE_WIDTH, Pen};

/// One millimetre in points.
pub(super) const MM: f32 = 72.0 / 25.4;
/// The QR-bill's height: the bottom 105 mm of an A4 page.
pub(super) const SLIP_HEIGHT: f32 = 105.0 * MM;
/// Where the QR-bill starts on its page.
pub(super) const SLIP_TOP: f32 = PAGE_HEIGHT - SLIP_HEIGHT;
/// The EPC code's side: 30 mm, which any phone's camera reads from a printout.
pub(super) const EPC_SIZE: f32 = 30.0 * MM;

/// SIX's sizes: headings and values of the receipt, then of the payment part.
const RECEIPT_HEADING: f32 = 6.0;
const RECEIPT_VALUE: f32 = 8.0;
const RECEIPT_LINE: f32 = 9.5;
const PART_HEADING: f32 = 8.0;
const PART_VALUE: f32 = 10.0;
const PART_LINE: f32 = 12.0;
const TITLE: f32 = 11.0;
/// The receipt's width, and where the payment part's columns start.
const RECEIPT_WIDTH: f32 = 62.0 * MM;
const CODE_LEFT: f32 = 67.0 * MM;
const CODE_SIDE: f32 = 46.0 * MM;
const INFO_LEFT: f32 = 118.0 * MM;

impl Pen {
    /// The EPC code at the right edge with its caption under it, its top at `top`.
    pub(super) fn epc_code(&mut self, modules: Modules, caption: &str, right: f32, top: f32) {
        self.ops.push(Op::Qr { x: right - EPC_SIZE, y: top, size: EPC_SIZE, modules, cross: false });
        let caption = self.fonts.regular.truncate(&one_line(caption), 7.0, EPC_SIZE + 40.0);
        self.right(right, top + EPC_SIZE + 10.0, &caption, Weight::Regular, 7.0, INK);
    }

    /// The Swiss QR-bill: the receipt and the payment part of `slip`, its code `modules`,
    /// in the bottom 105 mm of the page.
    pub(super) fn swiss_slip(&mut self, slip: &SwissSlipText, modules: Modules) {
        // Set in a typeface SIX allows; in the page's own, were that one unreadable (it is
        // compiled in, so every test would show it).
        let page_fonts = self.fonts;
        self.fonts = super::font::Fonts::slip().unwrap_or(page_fonts);
        let top = SLIP_TOP;
        // Where the bill is to be cut, with the words that say so above it.
        self.rule(top, 0.0, PAGE_WIDTH, 0.5, INK);
        self.ops.push(Op::VRule { x: RECEIPT_WIDTH, from: top, to: PAGE_HEIGHT, width: 0.5 });
        let separate = self.fonts.regular.truncate(&one_line(&slip.labels.separate), 7.0, PAGE_WIDTH);
        let width = self.fonts.regular.width(&separate, 7.0);
        self.text((PAGE_WIDTH - width) / 2.0, top - 3.0, &separate, Weight::Regular, 7.0, INK);

        self.receipt(slip, top);
        self.payment_part(slip, modules, top);
        self.fonts = page_fonts;
    }

    fn receipt(&mut self, slip: &SwissSlipText, top: f32) {
        let (left, width) = (5.0 * MM, 52.0 * MM);
        let labels = &slip.labels;
        self.text(left, top + 5.0 * MM + TITLE * 0.8, &labels.receipt, Weight::Bold, TITLE, INK);
        let mut y = top + 12.0 * MM;
        y = self.block(
            left,
            width,
            y,
            &labels.account_payable_to,
            &slip.account,
            RECEIPT_HEADING,
            RECEIPT_VALUE,
            RECEIPT_LINE,
        );
        if let Some(reference) = &slip.reference {
            y = self.block(
                left,
                width,
                y,
                &labels.reference,
                std::slice::from_ref(reference),
                RECEIPT_HEADING,
                RECEIPT_VALUE,
                RECEIPT_LINE,
            );
        }
        if slip.debtor.is_empty() {
            self.text(
                left,
                y + RECEIPT_HEADING,
                &labels.payable_by_name_address,
                Weight::Bold,
                RECEIPT_HEADING,
                INK,
            );
            self.corners(left, y + RECEIPT_LINE - 2.0, 52.0 * MM, 20.0 * MM);
        } else {
            self.block(
                left,
                width,
                y,
                &labels.payable_by,
                &slip.debtor,
                RECEIPT_HEADING,
                RECEIPT_VALUE,
                RECEIPT_LINE,
            );
        }
        let amount_top = top + 68.0 * MM;
        self.text(left, amount_top, &labels.currency, Weight::Bold, RECEIPT_HEADING, INK);
        self.text(left + 12.0 * MM, amount_top, &labels.amount, Weight::Bold, RECEIPT_HEADING, INK);
        self.text(left, amount_top + RECEIPT_LINE, &slip.currency, Weight::Regular, RECEIPT_VALUE, INK);
        match &slip.amount {
            Some(amount) => self.text(
                left + 12.0 * MM,
                amount_top + RECEIPT_LINE,
                amount,
                Weight::Regular,
                RECEIPT_VALUE,
                INK,
            ),
            None => self.corners(left + 22.0 * MM, amount_top - 4.0, 30.0 * MM, 10.0 * MM),
        }
        self.right(57.0 * MM, top + 82.0 * MM, &labels.acceptance_point, Weight::Bold, RECEIPT_HEADING, INK);
    }

    fn payment_part(&mut self, slip: &SwissSlipText, modules: Modules, top: f32) {
        let labels = &slip.labels;
        self.text(CODE_LEFT, top + 5.0 * MM + TITLE * 0.8, &labels.payment_part, Weight::Bold, TITLE, INK);
        self.ops.push(Op::Qr { x: CODE_LEFT, y: top + 17.0 * MM, size: CODE_SIDE, modules, cross: true });
        let amount_top = top + 68.0 * MM;
        self.text(CODE_LEFT, amount_top, &labels.currency, Weight::Bold, PART_HEADING, INK);
        self.text(CODE_LEFT + 15.0 * MM, amount_top, &labels.amount, Weight::Bold, PART_HEADING, INK);
        self.text(CODE_LEFT, amount_top + PART_LINE, &slip.currency, Weight::Regular, PART_VALUE, INK);
        match &slip.amount {
            Some(amount) => self.text(
                CODE_LEFT + 15.0 * MM,
                amount_top + PART_LINE,
                amount,
                Weight::Regular,
                PART_VALUE,
                INK,
            ),
            None => self.corners(CODE_LEFT + 15.0 * MM, amount_top + 3.0, 40.0 * MM, 15.0 * MM),
        }

        let width = PAGE_WIDTH - 5.0 * MM - INFO_LEFT;
        let mut y = top + 5.0 * MM;
        y = self.block(
            INFO_LEFT,
            width,
            y,
            &labels.account_payable_to,
            &slip.account,
            PART_HEADING,
            PART_VALUE,
            PART_LINE,
        );
        if let Some(reference) = &slip.reference {
            y = self.block(
                INFO_LEFT,
                width,
                y,
                &labels.reference,
                std::slice::from_ref(reference),
                PART_HEADING,
                PART_VALUE,
                PART_LINE,
            );
        }
        if !slip.information.is_empty() {
            y = self.block(
                INFO_LEFT,
                width,
                y,
                &labels.additional_information,
                std::slice::from_ref(&slip.information),
                PART_HEADING,
                PART_VALUE,
                PART_LINE,
            );
        }
        if slip.debtor.is_empty() {
            self.text(
                INFO_LEFT,
                y + PART_HEADING,
                &labels.payable_by_name_address,
                Weight::Bold,
                PART_HEADING,
                INK,
            );
            self.corners(INFO_LEFT, y + PART_LINE, 65.0 * MM, 25.0 * MM);
        } else {
            self.block(
                INFO_LEFT,
                width,
                y,
                &labels.payable_by,
                &slip.debtor,
                PART_HEADING,
                PART_VALUE,
                PART_LINE,
            );
        }
    }

    /// A heading and its lines from `top`, each cut to `width`; returns where the next
    /// block starts (a line's gap below).
    #[expect(clippy::too_many_arguments, reason = "a position, a box and two styles")]
    fn block(
        &mut self,
        left: f32,
        width: f32,
        top: f32,
        heading: &str,
        lines: &[String],
        heading_size: f32,
        value_size: f32,
        line: f32,
    ) -> f32 {
        let mut y = top + heading_size;
        self.text(left, y, heading, Weight::Bold, heading_size, INK);
        for wrapped in
            lines.iter().flat_map(|value| self.fonts.regular.wrap(&one_line(value), value_size, width))
        {
            y += line;
            self.text(left, y, &wrapped.text, Weight::Regular, value_size, INK);
        }
        y + line
    }

    /// The corner marks of a box to write in (SIX: 0.75 pt, 3 mm long).
    fn corners(&mut self, x: f32, y: f32, width: f32, height: f32) {
        self.ops.push(Op::Corners { x, y, width, height });
    }
}
