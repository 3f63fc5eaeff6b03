// The Stripe-Signature header of a webhook delivery, made by Stripe's official library
// (npm `stripe`, pinned in package.json, installed by `make payment-tools`): what the card
// payment tests sign Stripe's events with, so that billable's check is held to Stripe's own
// scheme.
//
//   node tests/payments/sign_stripe.mjs --secret whsec_… [--timestamp UNIX] < payload
//       prints the header value, `t=…,v1=…`, and nothing else (no newline)
//   node tests/payments/sign_stripe.mjs --secret whsec_… --verify HEADER [--tolerance S] < payload
//       exits 0 when Stripe's library (`stripe.webhooks.constructEvent`) accepts the header
//       for the payload (a timestamp at most S seconds old, by default Stripe's 300), else 1
//       with its reason on stderr
//
// The payload is stdin's bytes exactly (UTF-8, as Stripe's JSON is).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import Stripe from "stripe";

const usage = "usage: sign_stripe.mjs --secret whsec_… [--timestamp UNIX | --verify HEADER [--tolerance S]] < payload";
let values;
try {
  ({ values } = parseArgs({
    options: {
      secret: { type: "string" },
      timestamp: { type: "string" },
      verify: { type: "string" },
      tolerance: { type: "string" },
    },
  }));
} catch (error) {
  console.error(`${error.message}\n${usage}`);
  process.exit(2);
}
const integer = (name) => {
  if (values[name] === undefined) return undefined;
  if (!/^[0-9]+$/.test(values[name])) {
    console.error(`--${name} must be a whole number of seconds\n${usage}`);
    process.exit(2);
  }
  return Number(values[name]);
};
const timestamp = integer("timestamp");
const tolerance = integer("tolerance");
if (!values.secret) {
  console.error(`--secret is required\n${usage}`);
  process.exit(2);
}

const payload = readFileSync(0).toString("utf8");
// No request is made: the key only satisfies the constructor.
const stripe = new Stripe("sk_test_signing_only");
if (values.verify !== undefined) {
  try {
    stripe.webhooks.constructEvent(payload, values.verify, values.secret, tolerance);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
} else {
  const header = stripe.webhooks.generateTestHeaderString({
    payload,
    secret: values.secret,
    timestamp: timestamp ?? Math.floor(Date.now() / 1000),
  });
  process.stdout.write(header);
}
