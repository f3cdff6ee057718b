"""A polite OAI-PMH harvester for arXiv: ListRecords pages fetched through one connection with
resumption tokens, each page parsed by corpus.ingest.oai as it arrives."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lxml import etree

from corpus.ingest.http import HttpError, PoliteClient
from corpus.ingest.oai import (
    METADATA_PREFIXES,
    OAI_ENDPOINT,
    NotOaiReply,
    OaiError,
    OaiPage,
    OaiParseError,
    PageScan,
    ResumptionToken,
    element_text,
    iter_page,
    local_name,
    page_bytes,
    partition_day,
    read_page,
    record_from_element,
    scan_datestamps,
    scan_page,
)
from corpus.ingest.records import ArxivRecord, FailedRecord, normalize_ws


@dataclass
class HarvestedPage:
    """One page of a harvest: its raw bytes (for the landing zone) and what it holds."""

    index: int
    raw: bytes
    page: OaiPage
    records: list[ArxivRecord]
    failed: list[FailedRecord]


class OaiHarvester:
    """ListRecords / Identify against an OAI-PMH endpoint through :class:`PoliteClient`.

    Resumption tokens are used only within one harvest (they expire); a
    partition is always re-harvested from its dates. A reply that does not
    parse (a truncated body) is fetched again, up to ``max_parse_retries``.
    """

    def __init__(
        self,
        client: PoliteClient,
        base_url: str = OAI_ENDPOINT,
        max_pages: int = 100_000,
        max_parse_retries: int = 3,
        log: Callable[[str], None] | None = None,
    ):
        self.client = client
        self.base_url = base_url
        self.max_pages = max_pages
        self.max_parse_retries = max_parse_retries
        self._log = log or (lambda _m: None)

    def _fetch_parsed(self, params: dict[str, str], index: int) -> HarvestedPage:
        last: Exception | None = None
        for attempt in range(self.max_parse_retries + 1):
            raw = self.client.get(self.base_url, params=params).content
            source = f"{self.base_url}?{'&'.join(f'{k}={v}' for k, v in params.items())}"
            try:
                page, records, failed = read_page(raw, source)
            except OaiParseError as exc:
                last = exc
                self._log(f"unparseable reply (attempt {attempt + 1}): {exc}")
                continue
            return HarvestedPage(index, raw, page, records, failed)
        raise OaiParseError(f"reply still unparseable after {self.max_parse_retries + 1} attempts: {last}")

    def identify(self) -> dict[str, str]:
        raw = self.client.get(self.base_url, params={"verb": "Identify"}).content
        root = etree.fromstring(raw, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
        out: dict[str, str] = {}
        for el in root.iter():
            name = local_name(el)
            if name == "error":
                raise OaiError(el.get("code", "unknown"), normalize_ws(element_text(el)), self.base_url)
            if name in {
                "repositoryName",
                "baseURL",
                "protocolVersion",
                "earliestDatestamp",
                "granularity",
                "deletedRecord",
            }:
                out[name] = element_text(el).strip()
        return out

    def list_records(
        self,
        metadata_prefix: str = "arXiv",
        from_: str | None = None,
        until: str | None = None,
        set_: str | None = None,
    ) -> Iterator[HarvestedPage]:
        """Yield every page of a ListRecords harvest, following resumption tokens."""
        if metadata_prefix not in METADATA_PREFIXES:
            raise ValueError(
                f"unknown metadataPrefix {metadata_prefix!r}; expected one of {METADATA_PREFIXES}"
            )
        params = {"verb": "ListRecords", "metadataPrefix": metadata_prefix}
        if from_:
            params["from"] = from_
        if until:
            params["until"] = until
        if set_:
            params["set"] = set_
        seen_tokens: set[str] = set()
        for index in range(self.max_pages):
            harvested = self._fetch_parsed(params, index)
            yield harvested
            token = harvested.page.resumption.token if harvested.page.resumption else ""
            if not token:
                return
            if token in seen_tokens:
                raise OaiError("badResumptionToken", f"token {token!r} repeated: the endpoint is looping")
            seen_tokens.add(token)
            params = {"verb": "ListRecords", "resumptionToken": token}
        raise RuntimeError(f"harvest stopped after max_pages={self.max_pages} pages")

    def list_identifier_datestamps(self, from_: str, until: str, metadata_prefix: str = "arXiv") -> set[str]:
        """Datestamps present between two dates (first page only: enough to learn
        whether a day has records; the endpoint sensor asks one day at a time)."""
        params = {"verb": "ListIdentifiers", "metadataPrefix": metadata_prefix, "from": from_, "until": until}
        raw = self.client.get(self.base_url, params=params).content
        page = OaiPage(source=self.base_url)
        list(iter_page(raw, self.base_url, page))
        return set(scan_datestamps(raw))


__all__ = [
    "OAI_ENDPOINT",
    "HarvestedPage",
    "HttpError",
    "NotOaiReply",
    "OaiError",
    "OaiHarvester",
    "OaiPage",
    "OaiParseError",
    "PageScan",
    "ResumptionToken",
    "iter_page",
    "page_bytes",
    "partition_day",
    "read_page",
    "record_from_element",
    "scan_datestamps",
    "scan_page",
]
