"""Issue 55, also-review: the default remote's one standard-library request and the proxy the
environment names. A proxy that cannot be one gets one clear line naming the variable, never a
traceback or another error's words; nothing printed shows a user, password, path or query.
Fast tier: in process, against the tests' refusing endpoint (nothing listens there)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.remotes.test_default_remote import NO_PROXY_ENV, URL
from zoo._errors import RemoteUnavailable
from zoo.cli import main
from zoo.registry.remotes.default import DefaultRemote, shown

SECRET = "s3cretPW"

BAD_PROXIES = [
    ("http://[::1", "http://(unreadable address) is not a URL (Invalid IPv6 URL)"),
    ("http://127.0.0.1:99999", "http://(unreadable address) is not a URL (Port out of range 0-65535)"),
    (f"http://user:{SECRET}@127.0.0.1:notaport", "http://(unreadable address) is not a URL (Port could not be cast"),
    ("ftp://127.0.0.1:21", "ftp://127.0.0.1:21: its scheme is ftp://, and a proxy's is http://, https:// or socks5://"),
    ("http://", "http://(unreadable address) names no host"),
    ("http://127.0.0.1:0", "http://127.0.0.1:0 names port 0"),
]


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in NO_PROXY_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(("proxy", "problem"), BAD_PROXIES, ids=[p for p, _ in BAD_PROXIES])
def test_a_proxy_that_cannot_be_one_is_one_clear_line(no_proxy: pytest.MonkeyPatch, proxy: str, problem: str) -> None:
    no_proxy.setenv("HTTP_PROXY", proxy)
    with pytest.raises(RemoteUnavailable) as caught:
        DefaultRemote()._probe()
    message = str(caught.value)
    assert message.startswith(f"{URL}: the proxy HTTP_PROXY names cannot be used: {problem}"), message
    assert message.endswith("; correct it (e.g. http://HOST:PORT) or unset it") and SECRET not in message


def test_a_fetch_goes_on_past_a_bad_proxy_with_that_line(no_proxy: pytest.MonkeyPatch) -> None:
    no_proxy.setenv("http_proxy", "http://[::1")
    r = CliRunner().invoke(main, ["fetch", "add", "-t", "u55-128", "--no-build"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert (f"zoo: {URL}: the proxy http_proxy names cannot be used: http://(unreadable address) is not a URL "
            "(Invalid IPv6 URL)") in " ".join(r.output.split())
    assert "index.json cannot be used" not in r.output  # before: the ValueError was taken for a bad index


@pytest.mark.parametrize("proxy", [f"http://user:{SECRET}@127.0.0.1:1", f"user:{SECRET}@127.0.0.1:1",
                                   f"http://127.0.0.1:1/x?token={SECRET}", f"http://us@er:{SECRET}@127.0.0.1:1"])
def test_no_credential_of_a_proxy_or_endpoint_is_ever_shown(no_proxy: pytest.MonkeyPatch, refusing_endpoint: str,
                                                             proxy: str) -> None:
    no_proxy.setenv("HTTP_PROXY", proxy)
    no_proxy.setenv("HF_ENDPOINT", refusing_endpoint.replace("http://", f"http://hf:{SECRET}@"))
    with pytest.raises(RemoteUnavailable) as caught:
        DefaultRemote()._probe()
    assert SECRET not in str(caught.value) and "through the proxy http://127.0.0.1:1 (" in str(caught.value), caught.value
    no_proxy.delenv("HTTP_PROXY")
    with pytest.raises(RemoteUnavailable) as caught:
        DefaultRemote()._probe()
    assert SECRET not in str(caught.value) and f"cannot reach {refusing_endpoint} (" in str(caught.value)


def test_shown_keeps_scheme_host_and_port_only() -> None:
    assert shown(f"https://u:{SECRET}@[::1]:8443/p?q={SECRET}#f") == "https://[::1]:8443"
    assert shown("http://host\n:1") == "http://host:1"  # urllib drops the newline itself
    assert shown("http://ho st:1") == "http://(unreadable address)"
    assert shown("nonsense") == "(unreadable address)"


ODD_NO_PROXY = [("*", True), (",,,", False), ("[::1", False), (".127.0.0.1", True), (" 127.0.0.1 ", True)]


@pytest.mark.parametrize(("value", "around"), ODD_NO_PROXY, ids=[v for v, _ in ODD_NO_PROXY])
def test_an_odd_no_proxy_is_read_as_urllib_reads_it(no_proxy: pytest.MonkeyPatch, refusing_endpoint: str,
                                                    value: str, around: bool) -> None:
    """Pinned: each is one RemoteUnavailable, through the proxy or around it, never another error."""
    no_proxy.setenv("HTTP_PROXY", "http://127.0.0.1:1")
    no_proxy.setenv("NO_PROXY", value)
    with pytest.raises(RemoteUnavailable) as caught:
        DefaultRemote()._probe()
    assert ("through the proxy" not in str(caught.value)) is around, caught.value
