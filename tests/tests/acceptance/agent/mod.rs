//! The agent runtime against a fake OpenAI-compatible server (real HTTP), and the webhook
//! and repository triggers through real sockets.

mod events;
mod github;
mod mcp;
mod runtime;
mod tools;
mod webhook;
