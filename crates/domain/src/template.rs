//! The running-recap template.

/// The placeholder replaced by the running recap's content.
pub const PLACEHOLDER: &str = "{{running_recap}}";

/// `get_running_recap_injection`: no content (or empty) gives empty text; a
/// blank template gives the raw content; otherwise every placeholder is
/// replaced literally by the content.
pub fn render(template: &str, content: Option<&str>) -> String {
    render_with(template, PLACEHOLDER, content)
}

/// The placeholder of the message-recap tier's template.
pub const MESSAGE_RECAPS_PLACEHOLDER: &str = "{{message_recaps}}";

/// [`render`] with another placeholder (same rules).
pub fn render_with(template: &str, placeholder: &str, content: Option<&str>) -> String {
    let Some(content) = content.filter(|c| !c.is_empty()) else {
        return String::new();
    };
    if template.trim().is_empty() {
        return content.to_owned();
    }
    template.replace(placeholder, content)
}

#[cfg(test)]
mod tests;
