"""Company domain resolution (SPEC section 3)."""

import ipaddress
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from prospect_memory.notes.domains import _is_ip, resolve_domain
from prospect_memory.notes.errors import InvalidDomain

RESOLVES = [
    ("founder@acme.dev", "acme.dev"),
    ("https://www.acme.dev/careers", "acme.dev"),
    ("acme.dev", "acme.dev"),
    ("jobs.acme.dev", "acme.dev"),
    ("shop.acme.co.uk", "acme.co.uk"),
    ("ACME.DEV.", "acme.dev"),
    ("ACME.dev.", "acme.dev"),
    ("http://user:pw@www.acme.dev:8080/x?y#z", "acme.dev"),
    ("  acme.dev  ", "acme.dev"),
    ("Jane.Doe@Sub.Acme.dev", "acme.dev"),
    ("mailto:sales@acme.dev", "acme.dev"),
    ("acme.dev/careers?team=eng", "acme.dev"),
    ("acme.dev:443", "acme.dev"),
    ("HTTPS://WWW.ACME.DEV", "acme.dev"),
    ("ftp://files.acme.dev/", "acme.dev"),
    ("a.b.c.d.acme.com.au", "acme.com.au"),
    ("acme.github.io", "acme.github.io"),
    ("münchen.de", "xn--mnchen-3ya.de"),
    ("https://www.bücher.de/shop", "xn--bcher-kva.de"),
    ("info@bücher.de", "xn--bcher-kva.de"),
    ("xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
    ("例え.jp", "xn--r8jz45g.jp"),
    ("sub.例え.jp", "xn--r8jz45g.jp"),
    ("ÉCOLE.fr", "xn--cole-9oa.fr"),
    ("acme-corp.io", "acme-corp.io"),
    ("123.com", "123.com"),
    ("www.gov.uk", "www.gov.uk"),
]

REJECTS = [
    ("", "is empty"),
    ("   ", "is empty"),
    ("localhost", "single-label"),
    ("http://localhost:8000/", "single-label"),
    ("co.uk", "public suffix"),
    ("github.io", "public suffix"),
    ("com", "single-label"),
    ("1.2.3.4", "IP address"),
    ("http://192.168.0.1/admin", "IP address"),
    ("http://[::1]/", "IP address"),
    ("2001:db8::1", "IP address"),
    ("acme..dev", "empty label"),
    (".acme.dev", "empty label"),
    ("-acme.dev", "labels are letters"),
    ("acme_x.dev", "labels are letters"),
    ("acme .dev", "characters a domain cannot have"),
    ("a" * 64 + ".com", "longer than 63"),
    ("acme.invalid", "known public suffix"),
    ("http://", "without a host"),
    ("@acme.dev", "not a valid email"),
    ("founder@", "not a valid email"),
    ("acme.dev:99999", "invalid port"),
    ("x" * 3000, "longer than 2048"),
    ("\x00acme.dev", "characters a domain cannot have"),
]


@pytest.mark.parametrize(("value", "expected"), RESOLVES)
def test_resolves_to_registrable_domain(value, expected):
    assert resolve_domain(value).domain == expected


@pytest.mark.parametrize(("value", "reason"), REJECTS)
def test_rejects_input_without_a_registrable_domain(value, reason):
    with pytest.raises(InvalidDomain) as info:
        resolve_domain(value)
    error = info.value
    assert error.code == "invalid_domain"
    assert reason in error.details["reason"]
    assert "acme.com" in error.message  # says what to pass instead


@pytest.mark.parametrize("value", [None, 42, ["acme.dev"], {"domain": "acme.dev"}])
def test_rejects_non_strings(value):
    with pytest.raises(InvalidDomain, match="must be a string"):
        resolve_domain(value)


def test_email_input_keeps_the_address():
    resolved = resolve_domain("Jane.Doe@Sub.Acme.dev")
    assert resolved.address == "jane.doe@sub.acme.dev"
    assert resolve_domain("acme.dev").address is None


def test_table_is_large_enough():
    assert len(RESOLVES) + len(REJECTS) >= 30


def test_resolution_never_fetches_the_suffix_list(monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("domain resolution tried to reach the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    assert resolve_domain("shop.acme.co.uk").domain == "acme.co.uk"


# --- properties ---------------------------------------------------------------------------

label = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=20)
suffix = st.sampled_from(["com", "dev", "io", "co.uk", "com.au", "de", "fr", "pl", "es"])


@given(name=label, sub=st.lists(label, max_size=3), tld=suffix)
def test_every_form_of_a_company_resolves_alike(name, sub, tld):
    domain = f"{name}.{tld}"
    # Some such names are suffixes themselves on the list's private side (eu.com, us.org).
    assume(resolve_domain(f"www.{domain}").domain == domain)
    host = ".".join([*sub, domain])
    forms = [
        domain,
        host,
        host.upper() + ".",
        f"founder@{host}",
        f"https://{host}/about?x=1#team",
        f"http://user:pw@{host}:8080/",
    ]
    assert {resolve_domain(form).domain for form in forms} == {domain}


@given(name=label, tld=suffix)
def test_resolution_is_idempotent(name, tld):
    once = resolve_domain(f"www.{name}.{tld}").domain
    assert resolve_domain(once).domain == once


@given(st.text(max_size=300))
def test_arbitrary_text_resolves_or_is_rejected_clearly(text):
    try:
        resolved = resolve_domain(text)
    except InvalidDomain as error:
        rejection = error
    else:
        rejection = None
        domain = resolved.domain
        assert domain == domain.lower()
        assert domain.isascii()
        assert "." in domain
        assert len(domain) <= 253
    if rejection is not None:
        assert rejection.code == "invalid_domain"
        assert rejection.details["reason"]


@given(st.ip_addresses())
def test_ip_addresses_are_rejected(ip):
    value = f"http://[{ip}]/" if ip.version == 6 else str(ip)
    with pytest.raises(InvalidDomain, match="IP address"):
        resolve_domain(value)


@given(
    st.one_of(
        st.text(alphabet="0123456789.:abcdefABCDEF%[]x\u0663 ", max_size=45),
        st.ip_addresses().map(str),
        st.ip_addresses(v=6).map(lambda ip: f"{ip}%eth0"),
    )
)
def test_an_ip_address_is_told_apart_as_the_standard_library_reads_it(text):
    # The quick answer for a name never differs from ipaddress's parse of the text.
    try:
        ipaddress.ip_address(text)
        expected = True
    except ValueError:
        expected = False
    assert _is_ip(text) is expected


@given(tld=suffix)
def test_bare_public_suffixes_are_rejected(tld):
    assume("." in tld)
    with pytest.raises(InvalidDomain, match="public suffix"):
        resolve_domain(tld)
