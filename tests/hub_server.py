"""A small Hugging Face Hub on loopback, for the real huggingface_hub client.

It implements the endpoints zoo's use of the client reaches, with the
headers the client reads:

    HEAD/GET /{repo}/resolve/{revision}/{path}   X-Repo-Commit, ETag, Content-Length;
                                                 404 with X-Error-Code EntryNotFound /
                                                 RepoNotFound / RevisionNotFound; Range
    POST /api/repos/create                       409 if it exists
    POST /api/models/{repo}/preupload/{rev}      every file "regular" (no LFS/Xet upload)
    POST /api/models/{repo}/commit/{rev}         NDJSON; honours parentCommit (412); a branch
                                                 only: 404 RevisionNotFound, 400 for a tag
    POST /api/validate-yaml                      parses README front matter
    GET  /api/models/{repo}/revision/{rev}       repo info (an empty commit asks for it)
    GET  /api/models/{repo}/refs                 branches and tags (list_repo_refs)
    POST /api/models/{repo}/tag/{rev}            {"tag", "message"} (create_tag); 409 if
                                                 the tag exists, 404 RevisionNotFound

A revision is a branch, a tag or a commit. Repositories live in memory as
commits of {path: bytes}; a tag never moves once made. Every request is
logged, unknown endpoints answer 404 and are logged as such, and a test can
tamper with stored bytes or make the server die in the middle of a download.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    """tag -> commit."""
    tag_messages: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, str, list[str]]] = field(default_factory=list)
    """(commit, summary, paths) per commit, oldest first."""

    def resolve(self, revision: str) -> str | None:
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        return revision if revision in self.commits else None


class HubState:
    def __init__(self, token: str | None) -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self.unknown: list[tuple[str, str]] = []
        self.auth_seen: list[str | None] = []
        self.die_during: str | None = None
        """A path: its next GET sends half the bytes, then the server goes away."""
        self.lock = threading.Lock()
        self._counter = 0

    def commit(self, repo: Repo, branch: str, files: dict[str, bytes], summary: str) -> str:
        self._counter += 1
        parent = repo.branches.get(branch, "")
        digest = hashlib.sha1(json.dumps([parent, summary, self._counter, sorted((p, git_blob_sha1(d)) for p, d in files.items())]).encode())
        sha = digest.hexdigest()
        repo.commits[sha] = files
        repo.branches[branch] = sha
        return sha


_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_API_REPO = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/(?P<op>preupload|commit|revision|tag)/(?P<rev>[^/]+)$")
_REFS = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/refs$")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def state(self) -> HubState:
        return self.server.state

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None, *, head: bool = False) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _error(self, status: int, code: str | None, message: str, headers: dict[str, str] | None = None, *, head: bool = False) -> None:
        extra = {"X-Error-Message": message, **(headers or {})}
        if code:
            extra["X-Error-Code"] = code
        body = json.dumps({"error": message}).encode()
        self._send(status, body, {"Content-Type": "application/json", **extra}, head=head)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _record(self) -> str:
        path = urlsplit(self.path).path
        with self.state.lock:
            self.state.requests.append((self.command, path))
            self.state.auth_seen.append(self.headers.get("Authorization"))
        return path

    def _authorized(self) -> bool:
        token = self.state.token
        return token is None or self.headers.get("Authorization") == f"Bearer {token}"

    def do_HEAD(self) -> None:
        self._resolve(self._record(), head=True)

    def do_GET(self) -> None:
        path = self._record()
        m = _API_REPO.match(path)
        if m and m["op"] == "revision":
            self._repo_info(unquote(m["repo"]), unquote(m["rev"]))
            return
        refs = _REFS.match(path)
        if refs:
            self._refs(unquote(refs["repo"]))
            return
        self._resolve(path, head=False)

    def do_POST(self) -> None:
        path = self._record()
        body = self._body()
        if path == "/api/validate-yaml":
            self._validate_yaml(json.loads(body))
            return
        if path == "/api/repos/create":
            self._create(json.loads(body))
            return
        m = _API_REPO.match(path)
        if m and m["op"] == "preupload":
            self._preupload(unquote(m["repo"]), unquote(m["rev"]), json.loads(body))
            return
        if m and m["op"] == "commit":
            self._commit(unquote(m["repo"]), unquote(m["rev"]), body)
            return
        if m and m["op"] == "tag":
            self._tag(unquote(m["repo"]), unquote(m["rev"]), json.loads(body))
            return
        self._unknown(path)

    def _unknown(self, path: str) -> None:
        with self.state.lock:
            self.state.unknown.append((self.command, path))
        self._error(404, None, f"the test hub does not implement {self.command} {path}")

    def _resolve(self, path: str, *, head: bool) -> None:
        m = _RESOLVE.match(path)
        if not m:
            self._unknown(path)
            return
        repo_id, revision, file_path = m["repo"], unquote(m["rev"]), unquote(m["path"])
        with self.state.lock:
            repo = self.state.repos.get(repo_id)
            commit = repo.resolve(revision) if repo else None
            data = repo.commits[commit].get(file_path) if repo and commit else None
            die = not head and self.state.die_during == file_path
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found", head=head)
            return
        if commit is None:
            self._error(404, "RevisionNotFound", "Invalid rev id", head=head)
            return
        headers = {"X-Repo-Commit": commit}
        if data is None:
            self._error(404, "EntryNotFound", "Entry not found", headers, head=head)
            return
        headers["ETag"] = f'"{git_blob_sha1(data)}"'
        headers["Content-Type"] = "application/octet-stream"
        start = 0
        ranged = re.match(r"bytes=(\d+)-$", self.headers.get("Range", ""))
        if ranged and not head:
            start = min(int(ranged.group(1)), len(data))
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        if die:
            self.send_response(200)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.server.go_down()
            return
        self._send(206 if ranged and not head else 200, data[start:], headers, head=head)

    def _repo_info(self, repo_id: str, revision: str) -> None:
        with self.state.lock:
            repo = self.state.repos.get(repo_id)
            commit = repo.resolve(revision) if repo else None
            files = sorted(repo.commits[commit]) if repo and commit else []
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
        elif commit is None:
            self._error(404, "RevisionNotFound", "Invalid rev id")
        else:
            self._json(200, {"id": repo_id, "modelId": repo_id, "sha": commit, "private": False,
                             "siblings": [{"rfilename": f} for f in files]})

    def _refs(self, repo_id: str) -> None:
        with self.state.lock:
            repo = self.state.repos.get(repo_id)
            refs = None if repo is None else {
                "branches": [{"name": n, "ref": f"refs/heads/{n}", "targetCommit": c} for n, c in sorted(repo.branches.items())],
                "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": c} for n, c in sorted(repo.tags.items())],
                "converts": [],
            }
        if refs is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return
        if "include_prs" in urlsplit(self.path).query:
            refs["pullRequests"] = []
        self._json(200, refs)

    def _tag(self, repo_id: str, revision: str, payload: dict[str, Any]) -> None:
        if not self._authorized():
            self._error(401, None, "Invalid credentials in Authorization header")
            return
        tag = payload.get("tag")
        with self.state.lock:
            repo = self.state.repos.get(repo_id)
            commit = repo.resolve(revision) if repo else None
            if repo is None:
                self._error(404, "RepoNotFound", "Repository not found")
            elif commit is None:
                self._error(404, "RevisionNotFound", "Invalid rev id")
            elif not isinstance(tag, str) or not tag:
                self._error(400, None, "tag must be a non-empty string")
            elif tag in repo.tags:
                self._error(409, None, f"Tag reference refs/tags/{tag} already exists")
            else:
                repo.tags[tag] = commit
                repo.tag_messages[tag] = str(payload.get("message", ""))
                self._json(200, {})

    def _validate_yaml(self, payload: dict[str, Any]) -> None:
        content = payload.get("content", "")
        match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
        errors = []
        if match:
            try:
                meta = yaml.safe_load(match.group(1))
            except yaml.YAMLError as exc:
                meta, errors = None, [{"message": f"invalid YAML: {exc}"}]
            if not errors and not isinstance(meta, dict):
                errors.append({"message": "metadata must be a mapping"})
            elif not errors:
                if not isinstance(meta.get("library_name", ""), str):
                    errors.append({"message": "library_name must be a string"})
                tags = meta.get("tags", [])
                if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
                    errors.append({"message": "tags must be a list of strings"})
        self._json(400 if errors else 200, {"errors": errors, "warnings": []})

    def _create(self, payload: dict[str, Any]) -> None:
        if not self._authorized():
            self._error(401, None, "Invalid credentials in Authorization header")
            return
        repo_id = f"{payload.get('organization')}/{payload.get('name')}"
        with self.state.lock:
            if repo_id in self.state.repos:
                self._error(409, None, "You already created this model repo")
                return
            repo = self.state.repos[repo_id] = Repo()
            self.state.commit(repo, "main", {".gitattributes": b"*.pte filter=lfs diff=lfs merge=lfs -text\n"}, "initial commit")
        self._json(200, {"url": f"{self.server.url}/{repo_id}", "name": repo_id})

    def _preupload(self, repo_id: str, revision: str, payload: dict[str, Any]) -> None:
        with self.state.lock:
            repo = self.state.repos.get(repo_id)
            commit = repo.resolve(revision) if repo else None
            current = repo.commits[commit] if repo and commit else {}
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return
        files = [
            {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
             "oid": git_blob_sha1(current[f["path"]]) if f["path"] in current else None}
            for f in payload["files"]
        ]
        self._json(200, {"files": files, "commitOid": commit})

    def _commit(self, repo_id: str, revision: str, body: bytes) -> None:
        if not self._authorized():
            self._error(401, None, "Invalid credentials in Authorization header")
            return
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next(item["value"] for item in lines if item["key"] == "header")
        with self.state.lock:
            repo = self.state.repos.get(repo_id)
            if repo is None:
                self._error(404, "RepoNotFound", "Repository not found")
                return
            head = repo.branches.get(revision)
            if head is None and revision in repo.tags:
                # What status the real Hub gives here is not documented; a client error it is.
                self._error(400, None, f"Cannot commit to the tag {revision}: commits go on a branch")
                return
            if head is None:
                self._error(404, "RevisionNotFound", "Invalid rev id")
                return
            parent = header.get("parentCommit")
            if parent is not None and parent != head:
                self._error(412, None, "A commit has happened since. Please refresh and try again.")
                return
            files = dict(repo.commits[head])
            paths = []
            for item in lines:
                if item["key"] == "file":
                    value = item["value"]
                    files[value["path"]] = base64.b64decode(value["content"])
                    paths.append(value["path"])
                elif item["key"] == "deletedFile":
                    files.pop(item["value"]["path"], None)
                elif item["key"] != "header":
                    self._error(400, None, f"the test hub does not accept {item['key']!r} operations")
                    return
            sha = self.state.commit(repo, revision, files, header.get("summary", ""))
            repo.log.append((sha, header.get("summary", ""), paths))
        self._json(200, {"commitUrl": f"{self.server.url}/{repo_id}/commit/{sha}", "commitOid": sha, "pullRequestUrl": None})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: HubState
    url: str

    def go_down(self) -> None:
        """Stop answering: close the listening socket so new connections are refused."""
        threading.Thread(target=self.shutdown, daemon=True).start()
        self.socket.close()


class HubTestServer:
    """``with HubTestServer() as hub: hub.url`` is an HF_ENDPOINT."""

    def __init__(self, token: str | None = None) -> None:
        self.state = HubState(token)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = self.state
        self.url = self._server.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> HubTestServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def files(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        repo = self.state.repos[repo_id]
        commit = repo.resolve(revision)
        assert commit is not None
        return repo.commits[commit]

    def tamper(self, repo_id: str, path: str, data: bytes) -> None:
        """Change stored bytes in place, as a compromised server would (same commit)."""
        with self.state.lock:
            self.files(repo_id)[path] = data

    def request_count(self) -> int:
        return len(self.state.requests)
