//! [`InvoiceRenderer`] through a renderer service ([`crate::service`]), so PDFs can be made
//! on other machines than the API's.

use std::time::Duration;

use async_trait::async_trait;
use billing::{InvoiceDocument, InvoiceRenderer, RenderError};
use reqwest::StatusCode;

/// POSTs the document as JSON to `{base_url}/render`. Anything but a PDF within the
/// timeout (no connection, no answer in time, a status other than 200, a body that is not
/// a PDF) is a [`RenderError`].
#[derive(Debug, Clone)]
pub struct ProxyRenderer {
    endpoint: reqwest::Url,
    http: reqwest::Client,
}

impl ProxyRenderer {
    /// A renderer for the service at `base_url` (`http://renderer:8081`, a path prefix
    /// allowed). `timeout` bounds each whole request, from connecting to the last byte.
    pub fn new(base_url: &str, timeout: Duration) -> anyhow::Result<Self> {
        let base = reqwest::Url::parse(base_url)
            .map_err(|error| anyhow::anyhow!("renderer URL {base_url:?}: {error}"))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            anyhow::bail!("renderer URL {base_url:?}: must be an http:// or https:// URL");
        }
        let endpoint = reqwest::Url::parse(&format!("{}/render", base.as_str().trim_end_matches('/')))?;
        let http = reqwest::Client::builder().timeout(timeout).connect_timeout(timeout).build()?;
        Ok(Self { endpoint, http })
    }

    async fn fetch(&self, document: &InvoiceDocument) -> anyhow::Result<Vec<u8>> {
        let response = self.http.post(self.endpoint.clone()).json(document).send().await?;
        let status = response.status();
        let body = response.bytes().await?;
        if status != StatusCode::OK {
            let start = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            anyhow::bail!("answered {status}: {start}");
        }
        if !body.starts_with(b"%PDF-") {
            anyhow::bail!("answered 200 with something that is not a PDF ({} bytes)", body.len());
        }
        Ok(body.into())
    }
}

#[async_trait]
impl InvoiceRenderer for ProxyRenderer {
    async fn render(&self, document: &InvoiceDocument) -> Result<Vec<u8>, RenderError> {
        self.fetch(document)
            .await
            .map_err(|error| RenderError(error.context(format!("renderer service at {}", self.endpoint))))
    }
}
