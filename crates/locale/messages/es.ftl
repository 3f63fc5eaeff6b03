# billable's words in Spanish. Each message is a `locale::Term`; every language file holds
# every term (a test checks it). `{ $name }` is filled in by the code that asks.
# A percentage puts a no-break space (U+00A0) before its sign, as Spanish writes "21 %".

## A document as printed

invoice-title = Factura
credit-note-title = Factura rectificativa
continued-title = Factura { $serial } (continuación)
issue-date = Fecha de emisión
due-date = Fecha de vencimiento
corrects = Factura rectificada
service-date = Fecha de la operación
service-period = Periodo de la operación
service-date-is-issue-date = la misma que la fecha de emisión
day-span = del { $from } al { $to }
purchase-order = N.º de pedido
payment-terms = Condiciones de pago
days-to-pay = a { $days } días
status = Estado
from = EMISOR
bill-to = FACTURAR A
vat-number = NIF-IVA: { $number }
description = Descripción
quantity = Cantidad
unit-price = Precio unitario
amount = Importe
vat-column = IVA
percent = { $rate } %
discount = Descuento
discount-rate = Descuento ({ $rate } %)
less = { $label }: −{ $amount }
taxable-amount = Base imponible
subtotal = Subtotal
tax = IVA
tax-rate = IVA ({ $rate } %)
total = Total
paid = Pagado
credited = Abonado
written-off = Dado de baja
amount-due = Importe pendiente
payment-details = DATOS DE PAGO
page-of = Página { $page } de { $pages }
paid-stamp = PAGADO
# The table of the VAT groups under the totals: one row per category and rate.
vat-breakdown = Desglose del IVA
vat-rate = Tipo de IVA
# A row of the table whose category is not the standard rate: `rate` without its sign,
# `category` one of the category-… terms below.
rate-of-category = { $rate } % { $category }
category-zero-rated = tipo cero
category-exempt = exento
category-reverse-charge = inversión del sujeto pasivo
category-intra-community = entrega intracomunitaria
category-export = exportación
category-out-of-scope = no sujeto a IVA
payment-reference = Referencia de pago
buyer-reference = Su referencia
exchange-rate = Tipo de cambio
# `from`, `to`: currency codes; `rate`: units of `to` per unit of `from`.
exchange-rate-value = 1 { $from } = { $rate } { $to }
# The VAT in the team's currency, `currency`, on an invoice in another.
vat-in-currency = IVA en { $currency }
# Short units after a quantity ("7 h"); other units print their UN/ECE code.
unit-hour = h
unit-day = d

## The Swiss QR-bill's payment part and receipt. Its wording is fixed by the SIX
## Implementation Guidelines (2.3, section 3.4), which allow only German, French, Italian
## and English: a language without an official wording uses the English one.
## Spanish has none, so these stay English on purpose: do not translate them.

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
page-title = Factura { $serial } de { $sender }
page-status-open = Pendiente
page-status-paid = Pagada
page-status-partially-paid = Pagada parcialmente
page-status-overdue = Vencida
page-status-void = Anulada
page-download-pdf = Descargar PDF
# `format`: an e-invoice format's name, such as XRechnung.
page-download-einvoice = Descargar { $format }
page-downloads = Descargas
page-lines = Líneas de la factura
page-pay-by-transfer = Pagar por transferencia bancaria
page-scan-to-pay = Escanee el código con la aplicación de su banco para pagar
page-account-holder = Titular de la cuenta
page-iban = IBAN
page-bic = BIC
page-pay-by-card = Pagar con tarjeta
page-paid-thanks = Gracias: esta factura está pagada.
page-payment-received = Pago recibido. ¡Gracias!
page-payment-pending = Su pago se está procesando; esta página lo mostrará en cuanto se reciba.
page-payment-cancelled = El pago con tarjeta se ha cancelado; no se ha realizado ningún cargo.
page-nothing-due = No hay ningún importe pendiente en esta factura.
page-card-unavailable = El pago con tarjeta no está disponible en este momento; pague por transferencia.

## Mail: the default wording of each kind of message. A body ends with a line break, which
## the code adds (a message file cannot end a value with one).

mail-invoice-subject = Factura { $serial }
mail-invoice-body =
    Buenos días, { $client }:

    Le adjuntamos la factura { $serial } por un importe de { $amountDue } (vencimiento: { $dueDate }).

    Referencia de pago: { $paymentReference }

    Puede consultarla y pagarla aquí: { $hostedUrl }

    ¡Muchas gracias!
mail-reminder-subject = Recordatorio: factura { $serial }, { $amountDue } pendiente
mail-reminder-body =
    Buenos días, { $client }:

    Le recordamos amablemente que la factura { $serial } tiene todavía un importe pendiente de { $amountDue } (vencimiento: { $dueDate }).

    Referencia de pago: { $paymentReference }

    Puede consultar y pagar la factura aquí: { $hostedUrl }

    Si ya ha realizado el pago, le rogamos que ignore este mensaje. ¡Muchas gracias!
mail-credit-note-subject = Factura rectificativa { $serial }
mail-credit-note-body =
    Buenos días, { $client }:

    Le adjuntamos la factura rectificativa { $serial }. Importe que queda pendiente de la factura rectificada: { $amountDue }.

    También puede consultarla aquí: { $pdfUrl }
# What a mail says for the due date of an invoice without one: "vencimiento: a la recepción".
no-due-date = a la recepción
quote-title = Presupuesto
valid-until = Válido hasta
deposit-line = Anticipo del presupuesto { $quote }, IVA { $rate } %
deposits-deducted = Menos los anticipos facturados
quote-number = Presupuesto { $serial }
quote-status-draft = Borrador
quote-status-sent = Pendiente de su decisión
quote-status-accepted = Aceptado
quote-status-declined = Rechazado
quote-status-expired = Caducado
quote-status-converted = Facturado
quote-page-title = Presupuesto { $serial } de { $sender }
quote-decide = Su decisión
quote-signer-name = Su nombre completo
quote-agree = Acepto este presupuesto y sus condiciones.
quote-accept = Aceptar el presupuesto
quote-decline-reason = Motivo (opcional)
quote-decline = Rechazar el presupuesto
quote-accepted-by = Aceptado por { $signer } el { $date }.
quote-declined-on = Rechazado el { $date }.
quote-needs-name = Para aceptar, escriba su nombre y marque la casilla.
quote-notes = Condiciones
quote-date = Fecha del presupuesto
quote-for = Presupuesto para
quote-lines = Partidas
mail-quote-subject = Presupuesto { $serial }
mail-quote-body =
    Buenos días, { $client }:

    Le adjuntamos el presupuesto { $serial }: { $amountDue }.

    Puede consultarlo, aceptarlo o rechazarlo aquí: { $hostedUrl }
