# billable's words in English. Each message is a `locale::Term`; every language file holds
# every term (a test checks it). `{ $name }` is filled in by the code that asks.

## A document as printed

invoice-title = Invoice
credit-note-title = Credit note
continued-title = Invoice { $serial } (continued)
issue-date = Issue date
due-date = Due date
corrects = Corrects
service-date = Service date
service-period = Service period
service-date-is-issue-date = the issue date
day-span = { $from } to { $to }
purchase-order = Purchase order
payment-terms = Payment terms
days-to-pay = { $days } days net
status = Status
from = FROM
bill-to = BILL TO
vat-number = VAT: { $number }
description = Description
quantity = Quantity
unit-price = Unit price
amount = Amount
vat-column = VAT
percent = { $rate }%
discount = Discount
discount-rate = Discount ({ $rate }%)
less = { $label }: −{ $amount }
taxable-amount = Taxable amount
subtotal = Subtotal
tax = Tax
tax-rate = Tax ({ $rate }%)
total = Total
paid = Paid
credited = Credited
written-off = Written off
amount-due = Amount due
payment-details = PAYMENT DETAILS
page-of = Page { $page } of { $pages }
paid-stamp = PAID
# The table of the VAT groups under the totals: one row per category and rate.
vat-breakdown = VAT breakdown
vat-rate = VAT rate
# A row of the table whose category is not the standard rate: `rate` without its sign,
# `category` one of the category-… terms below.
rate-of-category = { $rate }% { $category }
category-zero-rated = zero rated
category-exempt = exempt
category-reverse-charge = reverse charge
category-intra-community = intra-community supply
category-export = export
category-out-of-scope = not subject to VAT
payment-reference = Payment reference
buyer-reference = Your reference
exchange-rate = Exchange rate
# `from`, `to`: currency codes; `rate`: units of `to` per unit of `from`.
exchange-rate-value = 1 { $from } = { $rate } { $to }
# The VAT in the team's currency, `currency`, on an invoice in another.
vat-in-currency = VAT in { $currency }
# Short units after a quantity ("7 h"); other units print their UN/ECE code.
unit-hour = h
unit-day = d

## The Swiss QR-bill's payment part and receipt. Its wording is fixed by the SIX
## Implementation Guidelines (2.3, section 3.4), which allow only German, French, Italian
## and English: a language without an official wording uses the English one.

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
page-title = Invoice { $serial } from { $sender }
page-status-open = Open
page-status-paid = Paid
page-status-partially-paid = Partially paid
page-status-overdue = Overdue
page-status-void = Cancelled
page-download-pdf = Download PDF
# `format`: an e-invoice format's name, such as XRechnung.
page-download-einvoice = Download { $format }
page-downloads = Downloads
page-lines = Invoice lines
page-pay-by-transfer = Pay by bank transfer
page-scan-to-pay = Scan with your banking app to pay
page-account-holder = Account holder
page-iban = IBAN
page-bic = BIC
page-pay-by-card = Pay by card
page-paid-thanks = Thank you: this invoice is paid.
page-payment-received = Payment received. Thank you!
page-payment-pending = Your payment is being processed; this page shows it once it arrives.
page-payment-cancelled = The card payment was cancelled; nothing was charged.
page-nothing-due = Nothing is due on this invoice.
page-card-unavailable = Card payment is not available right now; please pay by bank transfer.

## Mail: the default wording of each kind of message. A body ends with a line break, which
## the code adds (a message file cannot end a value with one).

mail-invoice-subject = Invoice { $serial }
mail-invoice-body =
    Hello { $client },

    please find invoice { $serial } attached: { $amountDue }, due { $dueDate }.

    Payment reference: { $paymentReference }

    You can view and pay it at { $hostedUrl }

    Thank you!
mail-reminder-subject = Reminder: invoice { $serial }, { $amountDue } due
mail-reminder-body =
    Hello { $client },

    this is a friendly reminder that { $amountDue } of invoice { $serial } is still open (due { $dueDate }).

    Payment reference: { $paymentReference }

    You can view and pay the invoice at { $hostedUrl }

    If you have paid already, please ignore this message. Thank you!
mail-credit-note-subject = Credit note { $serial }
mail-credit-note-body =
    Hello { $client },

    please find credit note { $serial } attached. What remains due on the invoice it credits: { $amountDue }.

    You can also view it at { $pdfUrl }
# What a mail says for the due date of an invoice without one: "due upon receipt".
no-due-date = upon receipt
quote-title = Quote
valid-until = Valid until
deposit-line = Deposit on quote { $quote }, { $rate } % VAT
deposits-deducted = Less deposits invoiced
quote-number = Quote { $serial }
quote-status-draft = Draft
quote-status-sent = Awaiting your decision
quote-status-accepted = Accepted
quote-status-declined = Declined
quote-status-expired = Expired
quote-status-converted = Invoiced
quote-page-title = Quote { $serial } from { $sender }
quote-decide = Your decision
quote-signer-name = Your full name
quote-agree = I accept this quote and its terms.
quote-accept = Accept quote
quote-decline-reason = Reason (optional)
quote-decline = Decline quote
quote-accepted-by = Accepted by { $signer } on { $date }.
quote-declined-on = Declined on { $date }.
quote-needs-name = To accept, type your name and tick the box.
quote-notes = Terms
quote-date = Quote date
quote-for = Quote for
quote-lines = Items
mail-quote-subject = Quote { $serial }
mail-quote-body =
    Hello { $client },

    please find quote { $serial } attached: { $amountDue }.

    You can read it, and accept or decline it, at { $hostedUrl }
