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
tax-rate-on = Tax ({ $rate }%) on { $base }
total = Total
paid = Paid
credited = Credited
written-off = Written off
amount-due = Amount due
payment-details = PAYMENT DETAILS
page-of = Page { $page } of { $pages }
paid-stamp = PAID

## Mail: the default wording of each kind of message. A body ends with a line break, which
## the code adds (a message file cannot end a value with one).

mail-invoice-subject = Invoice { $serial }
mail-invoice-body =
    Hello { $client },

    please find invoice { $serial } attached: { $amountDue }, due { $dueDate }.

    You can also view it at { $pdfUrl }

    Thank you!
mail-reminder-subject = Reminder: invoice { $serial }, { $amountDue } due
mail-reminder-body =
    Hello { $client },

    this is a friendly reminder that { $amountDue } of invoice { $serial } is still open (due { $dueDate }).

    You can view the invoice at { $pdfUrl }

    If you have paid already, please ignore this message. Thank you!
mail-credit-note-subject = Credit note { $serial }
mail-credit-note-body =
    Hello { $client },

    please find credit note { $serial } attached. What remains due on the invoice it credits: { $amountDue }.

    You can also view it at { $pdfUrl }
# What a mail says for the due date of an invoice without one: "due upon receipt".
no-due-date = upon receipt
