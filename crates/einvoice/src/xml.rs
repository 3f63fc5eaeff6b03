//! A small XML tree the writers build declaratively, then print with two-space indents;
//! quick-xml escapes its text and attribute values, after the characters XML 1.0 cannot
//! carry are dropped (text stored before billable refused them: an e-invoice stays
//! well-formed whatever its data).

use std::borrow::Cow;

use quick_xml::escape::escape;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Element {
    name: &'static str,
    attributes: Vec<(&'static str, String)>,
    content: Content,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Content {
    Children(Vec<Element>),
    Text(String),
}

/// An element named `name` (with its prefix: `cbc:ID`), empty so far.
pub(crate) fn element(name: &'static str) -> Element {
    Element { name, attributes: Vec::new(), content: Content::Children(Vec::new()) }
}

/// `<name>text</name>`.
pub(crate) fn text(name: &'static str, value: impl Into<String>) -> Element {
    Element { name, attributes: Vec::new(), content: Content::Text(value.into()) }
}

impl Element {
    #[must_use]
    pub(crate) fn attribute(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.attributes.push((name, value.into()));
        self
    }

    /// Appends `child`; an element holding text gives its text up for children.
    #[must_use]
    pub(crate) fn child(mut self, child: Element) -> Self {
        match &mut self.content {
            Content::Children(children) => children.push(child),
            Content::Text(_) => self.content = Content::Children(vec![child]),
        }
        self
    }

    /// Appends each of `children` in order; `None`s are left out.
    #[must_use]
    pub(crate) fn children(self, children: impl IntoIterator<Item = Option<Element>>) -> Self {
        children.into_iter().flatten().fold(self, Element::child)
    }

    /// The document: an XML declaration, then this element as its root.
    pub(crate) fn into_document(self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        self.write(&mut out, 0);
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let indent = "  ".repeat(depth);
        out.push_str(&indent);
        out.push('<');
        out.push_str(self.name);
        for (name, value) in &self.attributes {
            out.push(' ');
            out.push_str(name);
            out.push_str("=\"");
            out.push_str(&escape(kernel::xml_safe(value)));
            out.push('"');
        }
        match &self.content {
            Content::Children(children) if children.is_empty() => out.push_str("/>\n"),
            Content::Children(children) => {
                out.push_str(">\n");
                for child in children {
                    child.write(out, depth + 1);
                }
                out.push_str(&indent);
                close(out, self.name);
            }
            Content::Text(value) => {
                out.push('>');
                let escaped: Cow<'_, str> = escape(kernel::xml_safe(value));
                out.push_str(&escaped);
                close(out, self.name);
            }
        }
    }
}

fn close(out: &mut String, name: &str) {
    out.push_str("</");
    out.push_str(name);
    out.push_str(">\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped_and_nesting_indented() {
        let document = element("a:Root")
            .attribute("xmlns:a", "urn:x")
            .child(text("a:Name", "Smith & Sons <Ltd> \"quoted\""))
            .children([Some(text("a:Kept", "1").attribute("unit", "<&\">")), None, Some(element("a:Empty"))])
            .into_document();
        assert_eq!(
            document,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a:Root xmlns:a=\"urn:x\">\n  \
             <a:Name>Smith &amp; Sons &lt;Ltd&gt; &quot;quoted&quot;</a:Name>\n  \
             <a:Kept unit=\"&lt;&amp;&quot;&gt;\">1</a:Kept>\n  <a:Empty/>\n</a:Root>\n"
        );
    }

    #[test]
    fn what_xml_cannot_carry_is_dropped() {
        let document = element("Root")
            .child(text("Name", "Zo\u{1b}ë\u{0}\u{ffff}\tA\r\n").attribute("n", "\u{8}x"))
            .into_document();
        assert_eq!(
            document,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Root>\n  <Name n=\"x\">Zoë\tA\r\n</Name>\n</Root>\n"
        );
    }
}
