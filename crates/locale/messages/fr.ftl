# billable's words in French. Each message is a `locale::Term`; every language file holds
# every term (a test checks it). `{ $name }` is filled in by the code that asks.
# A percentage puts a no-break space (U+00A0) before its sign, as French writes "20 %".

## A document as printed

invoice-title = Facture
credit-note-title = Avoir
continued-title = Facture { $serial } (suite)
issue-date = Date d'émission
due-date = Date d'échéance
corrects = Facture d'origine
service-date = Date de prestation
service-period = Période de prestation
service-date-is-issue-date = identique à la date d'émission
day-span = du { $from } au { $to }
purchase-order = N° de commande
payment-terms = Conditions de paiement
days-to-pay = { $days } jours net
status = Statut
from = ÉMETTEUR
bill-to = FACTURÉ À
vat-number = N° TVA : { $number }
description = Désignation
quantity = Quantité
unit-price = Prix unitaire
amount = Montant
vat-column = TVA
percent = { $rate } %
discount = Remise
discount-rate = Remise ({ $rate } %)
less = { $label } : −{ $amount }
taxable-amount = Total HT
subtotal = Sous-total
tax = TVA
tax-rate = TVA ({ $rate } %)
total = Total TTC
paid = Payé
credited = Avoirs
written-off = Passé en pertes
amount-due = Montant dû
payment-details = INFORMATIONS DE PAIEMENT
page-of = Page { $page } sur { $pages }
paid-stamp = PAYÉ
# The table of the VAT groups under the totals: one row per category and rate.
vat-breakdown = Détail de la TVA
vat-rate = Taux de TVA
# A row of the table whose category is not the standard rate: `rate` without its sign,
# `category` one of the category-… terms below.
rate-of-category = { $rate } % { $category }
category-zero-rated = taux zéro
category-exempt = exonéré
category-reverse-charge = autoliquidation
category-intra-community = livraison intracommunautaire
category-export = exportation
category-out-of-scope = hors champ de la TVA
payment-reference = Référence de paiement
buyer-reference = Votre référence
exchange-rate = Taux de change
# `from`, `to`: currency codes; `rate`: units of `to` per unit of `from`.
exchange-rate-value = 1 { $from } = { $rate } { $to }
# The VAT in the team's currency, `currency`, on an invoice in another.
vat-in-currency = TVA en { $currency }
# Short units after a quantity ("7 h"); other units print their UN/ECE code.
unit-hour = h
unit-day = j

## The Swiss QR-bill's payment part and receipt. Its wording is fixed by the SIX
## Implementation Guidelines (2.3, section 3.4), which allow only German, French, Italian
## and English: these are the official French designations.

qr-receipt = Récépissé
qr-payment-part = Section paiement
qr-account-payable-to = Compte / Payable à
qr-reference = Référence
qr-additional-information = Informations supplémentaires
qr-payable-by = Payable par
qr-payable-by-name-address = Payable par (nom/adresse)
qr-currency = Monnaie
qr-amount = Montant
qr-acceptance-point = Point de dépôt
qr-separate-before-paying = A détacher avant le versement

## The client's page of an invoice

# `serial`, `sender`: the page's title.
page-title = Facture { $serial } de { $sender }
page-status-open = Ouverte
page-status-paid = Payée
page-status-partially-paid = Partiellement payée
page-status-overdue = En retard
page-status-void = Annulée
page-download-pdf = Télécharger le PDF
# `format`: an e-invoice format's name, such as XRechnung.
page-download-einvoice = Télécharger { $format }
page-downloads = Téléchargements
page-lines = Détail de la facture
page-pay-by-transfer = Payer par virement bancaire
page-scan-to-pay = Scannez le code avec votre application bancaire pour payer
page-account-holder = Titulaire du compte
page-iban = IBAN
page-bic = BIC
page-pay-by-card = Payer par carte
page-paid-thanks = Merci : cette facture est payée.
page-payment-received = Paiement reçu. Merci !
page-payment-pending = Votre paiement est en cours de traitement ; il apparaîtra sur cette page dès sa réception.
page-payment-cancelled = Le paiement par carte a été annulé ; aucun montant n'a été débité.
page-nothing-due = Aucun montant n'est dû sur cette facture.
page-card-unavailable = Le paiement par carte n'est pas disponible pour le moment ; veuillez payer par virement.

## Mail: the default wording of each kind of message. A body ends with a line break, which
## the code adds (a message file cannot end a value with one).

mail-invoice-subject = Facture { $serial }
mail-invoice-body =
    Bonjour { $client },

    Veuillez trouver ci-joint la facture { $serial } d'un montant de { $amountDue } (échéance : { $dueDate }).

    Référence de paiement : { $paymentReference }

    Vous pouvez la consulter et la régler ici : { $hostedUrl }

    Merci !
mail-reminder-subject = Rappel : facture { $serial }, { $amountDue } à régler
mail-reminder-body =
    Bonjour { $client },

    Sauf erreur de notre part, la somme de { $amountDue } reste due sur la facture { $serial } (échéance : { $dueDate }).

    Référence de paiement : { $paymentReference }

    Vous pouvez consulter et régler la facture ici : { $hostedUrl }

    Si vous avez déjà procédé au règlement, veuillez ne pas tenir compte de ce message. Merci !
mail-credit-note-subject = Avoir { $serial }
mail-credit-note-body =
    Bonjour { $client },

    Veuillez trouver ci-joint l'avoir { $serial }. Montant restant dû sur la facture concernée : { $amountDue }.

    Vous pouvez également le consulter ici : { $pdfUrl }
# What a mail says for the due date of an invoice without one: "échéance : à réception".
no-due-date = à réception
quote-title = Devis
valid-until = Valable jusqu’au
deposit-line = Acompte sur le devis { $quote }, TVA { $rate } %
deposits-deducted = Moins les acomptes facturés
quote-number = Devis { $serial }
quote-status-draft = Brouillon
quote-status-sent = En attente de votre décision
quote-status-accepted = Accepté
quote-status-declined = Refusé
quote-status-expired = Expiré
quote-status-converted = Facturé
quote-page-title = Devis { $serial } de { $sender }
quote-decide = Votre décision
quote-signer-name = Votre nom complet
quote-agree = J’accepte ce devis et ses conditions.
quote-accept = Accepter le devis
quote-decline-reason = Motif (facultatif)
quote-decline = Refuser le devis
quote-accepted-by = Accepté par { $signer } le { $date }.
quote-declined-on = Refusé le { $date }.
quote-needs-name = Pour accepter, saisissez votre nom et cochez la case.
quote-notes = Conditions
quote-date = Date du devis
quote-for = Devis pour
quote-lines = Postes
mail-quote-subject = Devis { $serial }
mail-quote-body =
    Bonjour { $client },

    Veuillez trouver ci-joint le devis { $serial } : { $amountDue }.

    Vous pouvez le consulter, l'accepter ou le refuser ici : { $hostedUrl }
