//! What the load side reads of a running server: its Prometheus endpoint
//! (`--metrics-listen`; one plain HTTP/1.1 GET per scrape, and sums of a
//! metric's samples) and its memory in `/proc/<pid>/status`.

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

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`, `RssAnon`...).
pub fn status_kb(pid: u32, field: &str) -> Result<u64, Error> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status").into())
}

/// The CPU time all threads of process `pid` have run so far, ns (the
/// first field of each `/proc/<pid>/task/<tid>/schedstat`): what the
/// process used, whatever else ran on its CPU meanwhile. Threads that
/// ended are not counted.
pub fn cpu_ns(pid: u32) -> Result<u64, Error> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let path = task?.path().join("schedstat");
        // A thread may end between the listing and the read.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        total += text
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Ok(total)
}

/// Starts a new peak: `VmHWM` becomes the current `VmRSS`
/// (`/proc/<pid>/clear_refs`, value 5).
pub fn reset_peak(pid: u32) -> Result<(), Error> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")?;
    Ok(())
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
    fn reads_this_process_memory() {
        let rss = status_kb(std::process::id(), "VmRSS").unwrap();
        assert!(rss > 0);
        assert!(status_kb(std::process::id(), "VmNoSuchField").is_err());
    }

    #[test]
    fn counts_this_process_cpu_time() {
        // The kernel counts CPU time in clock ticks (10 ms): work until one
        // passes (a fixed loop may finish inside one tick on a fast core),
        // for at most 10 s of wall time on a loaded machine.
        let before = cpu_ns(std::process::id()).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut x = 0u64;
        while cpu_ns(std::process::id()).unwrap() <= before && std::time::Instant::now() < deadline
        {
            for i in 0..1_000_000u64 {
                x = x.wrapping_add(i * i);
            }
            std::hint::black_box(x);
        }
        assert!(cpu_ns(std::process::id()).unwrap() > before);
    }

    #[test]
    fn dechunks_a_chunked_body() {
        assert_eq!(dechunk("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), "abcde");
    }
}
