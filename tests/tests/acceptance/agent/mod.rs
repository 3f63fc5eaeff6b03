//! The agent runtime against a fake OpenAI-compatible server (real HTTP), and the webhook
//! trigger through real sockets.

mod runtime;
mod webhook;
