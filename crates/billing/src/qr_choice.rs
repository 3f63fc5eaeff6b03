//! Which payment QR code: the formats and a team's choice among them, apart from the codes
//! themselves ([`crate::payment_qr`]) so that a sender can name its choice.

/// A kind of payment QR code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QrFormat {
    /// The EPC QR code (EPC069-12, version 002).
    Epc,
    /// The Swiss QR-bill's code.
    Swiss,
}

kernel::words!(QrFormat {
    Epc => "epc",
    Swiss => "swiss",
});

impl QrFormat {
    /// Its name, as people call it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Epc => "an EPC QR code",
            Self::Swiss => "a Swiss QR-bill",
        }
    }
}

/// Which payment QR code a PDF carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QrChoice {
    /// The Swiss QR-bill where the account is Swiss and the invoice has what it needs,
    /// else the EPC QR code where it has what that needs, else none.
    #[default]
    Auto,
    Epc,
    Swiss,
    None,
}

kernel::words!(QrChoice {
    Auto => "auto",
    Epc => "epc",
    Swiss => "swiss",
    None => "none",
});
