# billable's words in Dutch. Each message is a `locale::Term`; every language file holds
# every term (a test checks it). `{ $name }` is filled in by the code that asks.

## A document as printed

invoice-title = Factuur
credit-note-title = Creditnota
continued-title = Factuur { $serial } (vervolg)
issue-date = Factuurdatum
due-date = Vervaldatum
corrects = Oorspronkelijke factuur
service-date = Leveringsdatum
service-period = Leveringsperiode
service-date-is-issue-date = gelijk aan de factuurdatum
day-span = { $from } t/m { $to }
purchase-order = Ordernummer
payment-terms = Betalingstermijn
days-to-pay = { $days } dagen
status = Status
from = VAN
bill-to = FACTUUR AAN
vat-number = Btw-nummer: { $number }
description = Omschrijving
quantity = Aantal
unit-price = Prijs per eenheid
amount = Bedrag
vat-column = Btw
percent = { $rate }%
discount = Korting
discount-rate = Korting ({ $rate }%)
less = { $label }: −{ $amount }
taxable-amount = Totaal excl. btw
subtotal = Subtotaal
tax = Btw
tax-rate = Btw ({ $rate }%)
total = Totaal
paid = Betaald
credited = Gecrediteerd
written-off = Afgeschreven
amount-due = Te betalen
payment-details = BETAALGEGEVENS
page-of = Pagina { $page } van { $pages }
paid-stamp = BETAALD
# The table of the VAT groups under the totals: one row per category and rate.
vat-breakdown = Btw-specificatie
vat-rate = Btw-tarief
# A row of the table whose category is not the standard rate: `rate` without its sign,
# `category` one of the category-… terms below.
rate-of-category = { $rate }% { $category }
category-zero-rated = nultarief
category-exempt = vrijgesteld
category-reverse-charge = btw verlegd
category-intra-community = intracommunautaire levering
category-export = uitvoer
category-out-of-scope = niet onderworpen aan btw
payment-reference = Betalingskenmerk
buyer-reference = Uw kenmerk
exchange-rate = Wisselkoers
# `from`, `to`: currency codes; `rate`: units of `to` per unit of `from`.
exchange-rate-value = 1 { $from } = { $rate } { $to }
# The VAT in the team's currency, `currency`, on an invoice in another.
vat-in-currency = Btw in { $currency }
# Short units after a quantity ("7 u"); other units print their UN/ECE code.
unit-hour = u
unit-day = d

## The Swiss QR-bill's payment part and receipt. Its wording is fixed by the SIX
## Implementation Guidelines (2.3, section 3.4), which allow only German, French, Italian
## and English: a language without an official wording uses the English one.
## Dutch has none, so these stay English on purpose: do not translate them.

qr-receipt = Receipt
qr-payment-part = Payment part
qr-account-payable-to = Account / Payable to
qr-reference = Reference
qr-additional-information = Additional information
qr-payable-by = Payable by
qr-payable-by-name-address = Payable by (name/address)
qr-currency = Currency
qr-amount = Amount
qr-acceptance-point = Acceptance point
qr-separate-before-paying = Separate before paying in

## The client's page of an invoice

# `serial`, `sender`: the page's title.
page-title = Factuur { $serial } van { $sender }
page-status-open = Openstaand
page-status-paid = Betaald
page-status-partially-paid = Gedeeltelijk betaald
page-status-overdue = Achterstallig
page-status-void = Geannuleerd
page-download-pdf = PDF downloaden
# `format`: an e-invoice format's name, such as XRechnung.
page-download-einvoice = { $format } downloaden
page-downloads = Downloads
page-lines = Factuurregels
page-pay-by-transfer = Betalen per bankoverschrijving
page-scan-to-pay = Scan de code met uw bankapp om te betalen
page-account-holder = Rekeninghouder
page-iban = IBAN
page-bic = BIC
page-pay-by-card = Betalen met kaart
page-paid-thanks = Bedankt: deze factuur is betaald.
page-payment-received = Betaling ontvangen. Bedankt!
page-payment-pending = Uw betaling wordt verwerkt; zodra deze binnen is, ziet u dat op deze pagina.
page-payment-cancelled = De kaartbetaling is geannuleerd; er is niets afgeschreven.
page-nothing-due = Op deze factuur staat niets meer open.
page-card-unavailable = Betalen met een kaart is nu niet mogelijk; betaal alstublieft per overschrijving.

## Mail: the default wording of each kind of message. A body ends with a line break, which
## the code adds (a message file cannot end a value with one).

mail-invoice-subject = Factuur { $serial }
mail-invoice-body =
    Beste { $client },

    Hierbij ontvangt u factuur { $serial } ter hoogte van { $amountDue } (vervaldatum: { $dueDate }).

    Betalingskenmerk: { $paymentReference }

    U kunt de factuur hier bekijken en betalen: { $hostedUrl }

    Hartelijk dank!
mail-reminder-subject = Betalingsherinnering: factuur { $serial }, { $amountDue } openstaand
mail-reminder-body =
    Beste { $client },

    Graag herinneren wij u eraan dat er van factuur { $serial } nog { $amountDue } openstaat (vervaldatum: { $dueDate }).

    Betalingskenmerk: { $paymentReference }

    U kunt de factuur hier bekijken en betalen: { $hostedUrl }

    Mocht u inmiddels al betaald hebben, dan kunt u dit bericht als niet verzonden beschouwen. Hartelijk dank!
mail-credit-note-subject = Creditnota { $serial }
mail-credit-note-body =
    Beste { $client },

    Hierbij ontvangt u creditnota { $serial }. Nog openstaand bedrag op de bijbehorende factuur: { $amountDue }.

    U kunt deze ook hier bekijken: { $pdfUrl }
# What a mail says for the due date of an invoice without one: "vervaldatum: bij ontvangst".
no-due-date = bij ontvangst
quote-title = Offerte
valid-until = Geldig tot
deposit-line = Aanbetaling op offerte { $quote }, { $rate }% btw
deposits-deducted = Min gefactureerde aanbetalingen
quote-number = Offerte { $serial }
quote-status-draft = Concept
quote-status-sent = Wacht op uw beslissing
quote-status-accepted = Aanvaard
quote-status-declined = Afgewezen
quote-status-expired = Verlopen
quote-status-converted = Gefactureerd
quote-page-title = Offerte { $serial } van { $sender }
quote-decide = Uw beslissing
quote-signer-name = Uw volledige naam
quote-agree = Ik aanvaard deze offerte en haar voorwaarden.
quote-accept = Offerte aanvaarden
quote-decline-reason = Reden (optioneel)
quote-decline = Offerte afwijzen
quote-accepted-by = Aanvaard door { $signer } op { $date }.
quote-declined-on = Afgewezen op { $date }.
quote-needs-name = Om te aanvaarden, typ uw naam en vink het vakje aan.
quote-notes = Voorwaarden
quote-date = Offertedatum
quote-for = Offerte voor
quote-lines = Posten
mail-quote-subject = Offerte { $serial }
mail-quote-body =
    Beste { $client },

    Hierbij ontvangt u offerte { $serial }: { $amountDue }.

    U kunt deze hier bekijken en aanvaarden of afwijzen: { $hostedUrl }
