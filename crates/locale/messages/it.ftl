# billable's words in Italian. Each message is a `locale::Term`; every language file holds
# every term (a test checks it). `{ $name }` is filled in by the code that asks.

## A document as printed

invoice-title = Fattura
credit-note-title = Nota di credito
continued-title = Fattura { $serial } (continua)
issue-date = Data di emissione
due-date = Data di scadenza
corrects = Fattura di riferimento
service-date = Data della prestazione
service-period = Periodo della prestazione
service-date-is-issue-date = coincide con la data di emissione
day-span = dal { $from } al { $to }
purchase-order = Numero d'ordine
payment-terms = Condizioni di pagamento
days-to-pay = { $days } giorni netto
status = Stato
from = FORNITORE
bill-to = CLIENTE
vat-number = Partita IVA: { $number }
description = Descrizione
quantity = Quantità
unit-price = Prezzo unitario
amount = Importo
vat-column = IVA
percent = { $rate }%
discount = Sconto
discount-rate = Sconto ({ $rate }%)
less = { $label }: −{ $amount }
taxable-amount = Imponibile
subtotal = Subtotale
tax = IVA
tax-rate = IVA ({ $rate }%)
total = Totale
paid = Pagato
credited = Accreditato
written-off = Stralciato
amount-due = Importo da pagare
payment-details = DATI PER IL PAGAMENTO
page-of = Pagina { $page } di { $pages }
paid-stamp = PAGATO
# The table of the VAT groups under the totals: one row per category and rate.
vat-breakdown = Riepilogo IVA
vat-rate = Aliquota IVA
# A row of the table whose category is not the standard rate: `rate` without its sign,
# `category` one of the category-… terms below.
rate-of-category = { $rate }% { $category }
category-zero-rated = aliquota zero
category-exempt = esente
category-reverse-charge = inversione contabile
category-intra-community = cessione intracomunitaria
category-export = esportazione
category-out-of-scope = fuori campo IVA
payment-reference = Riferimento di pagamento
buyer-reference = Vostro riferimento
exchange-rate = Tasso di cambio
# `from`, `to`: currency codes; `rate`: units of `to` per unit of `from`.
exchange-rate-value = 1 { $from } = { $rate } { $to }
# The VAT in the team's currency, `currency`, on an invoice in another.
vat-in-currency = IVA in { $currency }
# Short units after a quantity ("7 h"); other units print their UN/ECE code.
unit-hour = h
unit-day = g

## The Swiss QR-bill's payment part and receipt. Its wording is fixed by the SIX
## Implementation Guidelines (2.3, section 3.4), which allow only German, French, Italian
## and English: these are the official Italian designations.

qr-receipt = Ricevuta
qr-payment-part = Sezione pagamento
qr-account-payable-to = Conto / Pagabile a
qr-reference = Riferimento
qr-additional-information = Informazioni supplementari
qr-payable-by = Pagabile da
qr-payable-by-name-address = Pagabile da (nome/indirizzo)
qr-currency = Valuta
qr-amount = Importo
qr-acceptance-point = Punto di accettazione
qr-separate-before-paying = Da staccare prima del versamento

## The client's page of an invoice

# `serial`, `sender`: the page's title.
page-title = Fattura { $serial } da { $sender }
page-status-open = Aperta
page-status-paid = Pagata
page-status-partially-paid = Parzialmente pagata
page-status-overdue = Scaduta
page-status-void = Annullata
page-download-pdf = Scarica PDF
# `format`: an e-invoice format's name, such as XRechnung.
page-download-einvoice = Scarica { $format }
page-downloads = Download
page-lines = Dettaglio della fattura
page-pay-by-transfer = Pagamento con bonifico bancario
page-scan-to-pay = Scansioni il codice con l'app della sua banca per pagare
page-account-holder = Intestatario del conto
page-iban = IBAN
page-bic = BIC
page-pay-by-card = Pagamento con carta
page-paid-thanks = Grazie: questa fattura è stata pagata.
page-payment-received = Pagamento ricevuto. Grazie!
page-payment-pending = Il pagamento è in corso di elaborazione; questa pagina lo mostrerà non appena sarà ricevuto.
page-payment-cancelled = Il pagamento con carta è stato annullato; non è stato addebitato nulla.
page-nothing-due = Non c'è nulla da pagare per questa fattura.
page-card-unavailable = Il pagamento con carta non è disponibile al momento; si prega di pagare con bonifico.

## Mail: the default wording of each kind of message. A body ends with a line break, which
## the code adds (a message file cannot end a value with one).

mail-invoice-subject = Fattura { $serial }
mail-invoice-body =
    Gentile { $client },

    in allegato trova la fattura { $serial } di { $amountDue } (scadenza: { $dueDate }).

    Causale: { $paymentReference }

    Può visualizzarla e pagarla qui: { $hostedUrl }

    Grazie!
mail-reminder-subject = Promemoria: fattura { $serial }, { $amountDue } da saldare
mail-reminder-body =
    Gentile { $client },

    le ricordiamo cortesemente che risulta ancora da saldare l'importo di { $amountDue } relativo alla fattura { $serial } (scadenza: { $dueDate }).

    Causale: { $paymentReference }

    Può visualizzare e pagare la fattura qui: { $hostedUrl }

    Se ha già provveduto al pagamento, non tenga conto di questo messaggio. Grazie!
mail-credit-note-subject = Nota di credito { $serial }
mail-credit-note-body =
    Gentile { $client },

    in allegato trova la nota di credito { $serial }. Importo ancora dovuto sulla fattura a cui si riferisce: { $amountDue }.

    Può anche visualizzarla qui: { $pdfUrl }
# What a mail says for the due date of an invoice without one: "scadenza: al ricevimento".
no-due-date = al ricevimento
quote-title = Preventivo
valid-until = Valido fino al
deposit-line = Acconto sul preventivo { $quote }, IVA { $rate } %
deposits-deducted = Meno gli acconti fatturati
quote-number = Preventivo { $serial }
quote-status-draft = Bozza
quote-status-sent = In attesa della Sua decisione
quote-status-accepted = Accettato
quote-status-declined = Rifiutato
quote-status-expired = Scaduto
quote-status-converted = Fatturato
quote-page-title = Preventivo { $serial } di { $sender }
quote-decide = La Sua decisione
quote-signer-name = Il Suo nome completo
quote-agree = Accetto questo preventivo e le sue condizioni.
quote-accept = Accetta il preventivo
quote-decline-reason = Motivo (facoltativo)
quote-decline = Rifiuta il preventivo
quote-accepted-by = Accettato da { $signer } il { $date }.
quote-declined-on = Rifiutato il { $date }.
quote-needs-name = Per accettare, scriva il Suo nome e spunti la casella.
quote-notes = Condizioni
quote-date = Data del preventivo
quote-for = Preventivo per
quote-lines = Voci
mail-quote-subject = Preventivo { $serial }
mail-quote-body =
    Gentile { $client },

    in allegato trova il preventivo { $serial }: { $amountDue }.

    Può visualizzarlo, accettarlo o rifiutarlo qui: { $hostedUrl }
