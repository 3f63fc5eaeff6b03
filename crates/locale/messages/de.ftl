# billable's words in German. Each message is a `locale::Term`; every language file holds
# every term (a test checks it). `{ $name }` is filled in by the code that asks.
# A percentage puts a no-break space (U+00A0) before its sign, as German writes "19 %".

## A document as printed

invoice-title = Rechnung
credit-note-title = Rechnungskorrektur
continued-title = Rechnung { $serial } (Fortsetzung)
issue-date = Rechnungsdatum
due-date = Fälligkeitsdatum
corrects = Korrigierte Rechnung
service-date = Leistungsdatum
service-period = Leistungszeitraum
service-date-is-issue-date = entspricht dem Rechnungsdatum
day-span = { $from } bis { $to }
purchase-order = Bestellnummer
payment-terms = Zahlungsbedingungen
days-to-pay = { $days } Tage netto
status = Status
from = VON
bill-to = RECHNUNG AN
vat-number = USt-IdNr.: { $number }
description = Beschreibung
quantity = Menge
unit-price = Einzelpreis
amount = Betrag
vat-column = USt.
percent = { $rate } %
discount = Rabatt
discount-rate = Rabatt ({ $rate } %)
less = { $label }: −{ $amount }
taxable-amount = Nettobetrag
subtotal = Zwischensumme
tax = USt.
tax-rate = USt. ({ $rate } %)
total = Gesamtbetrag
paid = Bezahlt
credited = Gutgeschrieben
written-off = Abgeschrieben
amount-due = Offener Betrag
payment-details = ZAHLUNGSINFORMATIONEN
page-of = Seite { $page } von { $pages }
paid-stamp = BEZAHLT
# The table of the VAT groups under the totals: one row per category and rate.
vat-breakdown = USt.-Aufstellung
vat-rate = USt.-Satz
# A row of the table whose category is not the standard rate: `rate` without its sign,
# `category` one of the category-… terms below.
rate-of-category = { $rate } % { $category }
category-zero-rated = Nullsatz
category-exempt = steuerfrei
category-reverse-charge = Steuerschuldnerschaft des Leistungsempfängers
category-intra-community = innergemeinschaftliche Lieferung
category-export = Ausfuhrlieferung
category-out-of-scope = nicht steuerbar
payment-reference = Zahlungsreferenz
buyer-reference = Ihre Referenz
exchange-rate = Wechselkurs
# `from`, `to`: currency codes; `rate`: units of `to` per unit of `from`.
exchange-rate-value = 1 { $from } = { $rate } { $to }
# The VAT in the team's currency, `currency`, on an invoice in another.
vat-in-currency = USt. in { $currency }
# Short units after a quantity ("7 Std."); other units print their UN/ECE code.
unit-hour = Std.
unit-day = Tg.

## The Swiss QR-bill's payment part and receipt. Its wording is fixed by the SIX
## Implementation Guidelines (2.3, section 3.4), which allow only German, French, Italian
## and English: these are the official German designations.

qr-receipt = Empfangsschein
qr-payment-part = Zahlteil
qr-account-payable-to = Konto / Zahlbar an
qr-reference = Referenz
qr-additional-information = Zusätzliche Informationen
qr-payable-by = Zahlbar durch
qr-payable-by-name-address = Zahlbar durch (Name/Adresse)
qr-currency = Währung
qr-amount = Betrag
qr-acceptance-point = Annahmestelle
qr-separate-before-paying = Vor der Einzahlung abzutrennen

## The client's page of an invoice

# `serial`, `sender`: the page's title.
page-title = Rechnung { $serial } von { $sender }
page-status-open = Offen
page-status-paid = Bezahlt
page-status-partially-paid = Teilweise bezahlt
page-status-overdue = Überfällig
page-status-void = Storniert
page-download-pdf = PDF herunterladen
# `format`: an e-invoice format's name, such as XRechnung.
page-download-einvoice = { $format } herunterladen
page-downloads = Downloads
page-lines = Rechnungspositionen
page-pay-by-transfer = Per Überweisung bezahlen
page-scan-to-pay = Scannen Sie den Code mit Ihrer Banking-App, um zu bezahlen
page-account-holder = Kontoinhaber
page-iban = IBAN
page-bic = BIC
page-pay-by-card = Mit Karte bezahlen
page-paid-thanks = Vielen Dank: Diese Rechnung ist bezahlt.
page-payment-received = Zahlung erhalten. Vielen Dank!
page-payment-pending = Ihre Zahlung wird bearbeitet; sobald sie eingegangen ist, zeigt diese Seite sie an.
page-payment-cancelled = Die Kartenzahlung wurde abgebrochen; es wurde nichts belastet.
page-nothing-due = Für diese Rechnung ist kein Betrag offen.
page-card-unavailable = Die Kartenzahlung ist gerade nicht verfügbar; bitte zahlen Sie per Überweisung.

## Mail: the default wording of each kind of message. A body ends with a line break, which
## the code adds (a message file cannot end a value with one).

mail-invoice-subject = Rechnung { $serial }
mail-invoice-body =
    Guten Tag { $client },

    anbei erhalten Sie die Rechnung { $serial } über { $amountDue } (fällig: { $dueDate }).

    Verwendungszweck: { $paymentReference }

    Sie können die Rechnung hier ansehen und bezahlen: { $hostedUrl }

    Vielen Dank!
mail-reminder-subject = Zahlungserinnerung: Rechnung { $serial }, { $amountDue } offen
mail-reminder-body =
    Guten Tag { $client },

    wir möchten Sie freundlich daran erinnern, dass von der Rechnung { $serial } noch ein Betrag von { $amountDue } offen ist (fällig: { $dueDate }).

    Verwendungszweck: { $paymentReference }

    Sie können die Rechnung hier ansehen und bezahlen: { $hostedUrl }

    Sollten Sie bereits bezahlt haben, betrachten Sie diese Nachricht bitte als gegenstandslos. Vielen Dank!
mail-credit-note-subject = Rechnungskorrektur { $serial }
mail-credit-note-body =
    Guten Tag { $client },

    anbei erhalten Sie die Rechnungskorrektur { $serial }. Auf der korrigierten Rechnung ist noch offen: { $amountDue }.

    Sie können sie auch hier ansehen: { $pdfUrl }
# What a mail says for the due date of an invoice without one: "fällig: sofort nach Erhalt".
no-due-date = sofort nach Erhalt
quote-title = Angebot
valid-until = Gültig bis
deposit-line = Anzahlung zu Angebot { $quote }, { $rate } % USt.
deposits-deducted = Abzüglich Anzahlungsrechnungen
quote-number = Angebot { $serial }
quote-status-draft = Entwurf
quote-status-sent = Wartet auf Ihre Entscheidung
quote-status-accepted = Angenommen
quote-status-declined = Abgelehnt
quote-status-expired = Abgelaufen
quote-status-converted = In Rechnung gestellt
quote-page-title = Angebot { $serial } von { $sender }
quote-decide = Ihre Entscheidung
quote-signer-name = Ihr vollständiger Name
quote-agree = Ich nehme dieses Angebot mit seinen Bedingungen an.
quote-accept = Angebot annehmen
quote-decline-reason = Grund (optional)
quote-decline = Angebot ablehnen
quote-accepted-by = Angenommen von { $signer } am { $date }.
quote-declined-on = Abgelehnt am { $date }.
quote-needs-name = Zum Annehmen geben Sie Ihren Namen ein und setzen Sie das Häkchen.
quote-notes = Bedingungen
quote-date = Angebotsdatum
quote-for = Angebot für
quote-lines = Positionen
mail-quote-subject = Angebot { $serial }
mail-quote-body =
    Guten Tag { $client },

    anbei erhalten Sie unser Angebot { $serial }: { $amountDue }.

    Sie können es hier ansehen und annehmen oder ablehnen: { $hostedUrl }
