//! Reading recapd's Prometheus endpoint (`--metrics-listen`) from the load
//! side: one plain HTTP/1.1 GET per scrape, and sums of a metric's samples.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Error = Box<dyn std::error::Error>;

/// The text of `http://addr/metrics` (the body only). Fails on a refused
/// connection or an answer other than 200.
pub async fn scrape(addr: &str) -> Result<String, Error> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(
            format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    let answer = String::from_utf8(answer)?;
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or("metrics answer without a header end")?;
    let status = head.lines().next().unwrap_or_default();
    if !status.contains(" 200") {
        return Err(format!("metrics endpoint answered {status:?}").into());
    }
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Ok(dechunk(body));
    }
    Ok(body.to_owned())
}

/// The body of a chunked HTTP/1.1 answer, read whole.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The sum of every sample of `name` (all label sets), or `None` when the
/// exposition has no sample of it (the metric does not exist yet).
pub fn metric_sum(exposition: &str, name: &str) -> Option<f64> {
    let mut found = None;
    for line in exposition.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        if !(rest.starts_with(' ') || rest.starts_with('{')) {
            continue;
        }
        if let Some(value) = line
            .rsplit_once(' ')
            .and_then(|(_, v)| v.parse::<f64>().ok())
        {
            *found.get_or_insert(0.0) += value;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_label_sets_and_ignores_longer_names() {
        let text = "# TYPE a_total counter\na_total{x=\"1\"} 2\na_total{x=\"2\"} 3\na_total_other 100\nb 1\n";
        assert_eq!(metric_sum(text, "a_total"), Some(5.0));
        assert_eq!(metric_sum(text, "missing"), None);
    }

    #[test]
    fn dechunks_a_chunked_body() {
        assert_eq!(dechunk("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), "abcde");
    }
}
