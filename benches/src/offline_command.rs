//! The command every bench runs a client with: a cleared environment, a
//! home and XDG folders of its own, the project as working directory, and
//! anything beyond loopback sent to a proxy that refuses it.

use std::path::Path;
use std::process::Command;

/// `binary` in `project` with `home` as its home; with `proxy` (the mock's
/// [`MockModel::proxy_url`](crate::MockModel::proxy_url)), every
/// non-loopback connection goes there and is refused at once instead of
/// hanging until a timeout on this machine's network.
pub fn offline_command(binary: &Path, project: &Path, home: &Path, proxy: Option<&str>) -> Command {
    let mut cmd = Command::new(binary);
    cmd.current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("PWD", project)
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .env("LANG", "C.UTF-8")
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost");
    if let Some(proxy) = proxy {
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
            cmd.env(name, proxy);
        }
    }
    cmd
}
