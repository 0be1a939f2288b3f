r"""A two-layer causal Transformer that runs Hedge over a pool of experts from its own context.

At attempt :math:`t` of a self-correction session the model is prompted with a fixed template of
:math:`N = T + K + 1` tokens:

1. :math:`T` **record** slots. Slot :math:`s < t` holds the record of attempt :math:`s`: the experts'
   answers :math:`\hat y_s \in \{0,1\}^K`, the model's own answer :math:`a_s` and the verifier's verdict
   :math:`c_s` (1 = right). Slots :math:`s \ge t` are blank.
2. :math:`K` **expert** tokens, one per expert: its identity :math:`e_j` and its answer
   :math:`\hat y_{t,j}` to the current query.
3. One **answer** slot, where the model's answer is read (greedy decoding: 1 when the vote is at
   least 1/2).

The network (one MLP, then two single-head attention layers, residual connections, no layer norm):

* **MLP** (per token): the loss of every expert in a record, :math:`\Lambda_{s,j} = \mathbb 1[\hat y_{s,j}
  \ne a_s \oplus (1-c_s)] = 1 - \mathrm{parity}(\hat y_{s,j}, a_s, c_s)`, exactly, with ReLUs:
  :math:`\mathrm{parity}(z) = z - 2(z-1)_+ + 2(z-2)_+` for :math:`z = \hat y + a + c \in \{0,1,2,3\}`.
  Blank, expert and answer tokens get :math:`\Lambda = 0`.
* **Attention 1** (the counter): all scores zero, so each token averages the values of the tokens up
  to it; the answer slot, last of :math:`N`, gets :math:`M = \sum_{s<t}\Lambda_s / N = L_t / N`.
* **Attention 2** (the vote): the answer slot's query :math:`(\beta, -\eta N M)` meets the keys
  :math:`(\mathbb 1[\text{expert}], e_j)`, so expert token :math:`j` scores :math:`\beta - \eta L_{t,j}` and
  every other token 0. With :math:`\beta = \eta(T-1) + 50` the other tokens carry a relative weight
  below :math:`N e^{-50}`, under float64 rounding, so the output is Hedge's vote
  :math:`\sum_j \mathrm{softmax}(-\eta L_t)_j\,\hat y_{t,j}`.

Every weight is fixed by :math:`(K, T, \eta)`; none depends on the hidden task. Both attention layers
call :func:`paperlib.models.attention.softmax_attention` with a causal mask.

References
----------
B. Huang et al., "Sample Complexity and Representation Ability of Test-time Scaling Paradigms", ICLR
2026, arXiv:2506.05295 (Section 4: a Transformer simulates online learning over experts at test time;
their construction, which merges expert Transformers and assumes a regret-minimising one, is not this
one).
N. Littlestone, M. K. Warmuth, "The weighted majority algorithm", Information and Computation, 1994.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..models import attention
from ..core._validation import as_array, check_bool, check_int, check_real
from .self_correction import TIE_TOLERANCE

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "TransformerWeights",
    "slot_names",
    "hedge_transformer_weights",
    "self_correction_prompt",
    "hedge_transformer_forward",
    "hedge_transformer_session",
    "hedge_transformer_loop",
]

_MARGIN = 50.0  # beta - eta * (largest possible loss): leakage below N * exp(-50)


def _layout(sizes) -> dict[str, slice]:
    """Consecutive residual-stream slots: ``[(name, size), ...]`` -> ``{name: slice}`` (shared with in_context_experts)."""
    out, start = {}, 0
    for name, size in sizes:
        out[name] = slice(start, start + size)
        start += size
    return out


def _slots(k: int) -> dict[str, slice]:
    """Positions of the residual-stream slots for a pool of ``k`` experts (width 4k + 7)."""
    return _layout([("one", 1), ("is_record", 1), ("is_expert", 1), ("record_preds", k), ("record_answer", 1),
                    ("record_verdict", 1), ("expert_id", k), ("expert_says", 1), ("loss", k),
                    ("mean_loss", k), ("vote", 1)])


def slot_names(num_experts):
    """Names of the residual-stream coordinates, in order (for tables of tokens).

    Parameters
    ----------
    num_experts : int
        :math:`K \\ge 1`.

    Returns
    -------
    list of str, length 4K + 7

    Raises
    ------
    ValueError
        If ``num_experts`` is not a positive integer.

    Examples
    --------
    >>> slot_names(2)[:6]
    ['one', 'is_record', 'is_expert', 'record_preds[0]', 'record_preds[1]', 'record_answer']
    """
    k = check_int("num_experts", num_experts, minimum=1)
    names = []
    for name, sl in _slots(k).items():
        size = sl.stop - sl.start
        names += [name] if size == 1 else [f"{name}[{i}]" for i in range(size)]
    return names


class TransformerWeights(NamedTuple):
    """Weights of the two-layer network (``d = 4K + 7``); see :func:`hedge_transformer_weights`.

    Attributes
    ----------
    mlp_in, mlp_bias, mlp_out : arrays, shapes (d, 3K+1), (3K+1,), (3K+1, d)
    q1, k1, v1, o1 : arrays, shapes (d, 1), (d, 1), (d, K), (K, d)
    q2, k2, v2, o2 : arrays, shapes (d, K+1), (d, K+1), (d, 1), (1, d)
    """

    mlp_in: np.ndarray
    mlp_bias: np.ndarray
    mlp_out: np.ndarray
    q1: np.ndarray
    k1: np.ndarray
    v1: np.ndarray
    o1: np.ndarray
    q2: np.ndarray
    k2: np.ndarray
    v2: np.ndarray
    o2: np.ndarray


def hedge_transformer_weights(num_experts, horizon, *, eta):
    r"""The fixed weights that make the network run Hedge with rate :math:`\eta` over :math:`K` experts.

    Parameters
    ----------
    num_experts : int
        :math:`K \ge 1`.
    horizon : int
        Number of record slots :math:`T \ge 1` (the longest session).
    eta : float
        Hedge's learning rate :math:`\eta > 0`.

    Returns
    -------
    TransformerWeights
        Dense float64 matrices; read and written slots are listed in the module docstring.

    Raises
    ------
    ValueError
        If a size is not a positive integer or ``eta`` is not positive.

    Examples
    --------
    >>> w = hedge_transformer_weights(3, 5, eta=1.0)
    >>> w.mlp_in.shape, w.q2.shape
    ((19, 10), (19, 4))
    """
    k = check_int("num_experts", num_experts, minimum=1)
    t = check_int("horizon", horizon, minimum=1)
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    sl, d, n = _slots(k), 4 * k + 7, t + k + 1
    idx = lambda name: sl[name].start  # noqa: E731
    ar = np.arange(k)
    # MLP: unit 0 = is_record; units 1 + 3j + (0, 1, 2) = relu(z_j - (0, 1, 2)), z_j = y_j + a + c
    mlp_in, mlp_bias, mlp_out = np.zeros((d, 3 * k + 1)), np.zeros(3 * k + 1), np.zeros((3 * k + 1, d))
    mlp_in[idx("is_record"), 0] = 1.0
    for off in range(3):
        cols = 1 + 3 * ar + off
        mlp_in[idx("record_preds") + ar, cols] = 1.0
        mlp_in[idx("record_answer"), cols] = 1.0
        mlp_in[idx("record_verdict"), cols] = 1.0
        mlp_bias[cols] = -float(off)
        mlp_out[cols, idx("loss") + ar] = (-1.0, 2.0, -2.0)[off]
    mlp_out[0, sl["loss"]] = 1.0
    # attention 1: zero scores (uniform causal average) of the loss slot into mean_loss
    q1, k1 = np.zeros((d, 1)), np.zeros((d, 1))
    v1, o1 = np.zeros((d, k)), np.zeros((k, d))
    v1[idx("loss") + ar, ar] = 1.0
    o1[ar, idx("mean_loss") + ar] = 1.0
    # attention 2: query (beta, -eta N mean_loss), key (is_expert, expert_id), value expert_says
    q2, k2 = np.zeros((d, k + 1)), np.zeros((d, k + 1))
    q2[idx("one"), 0] = eta * (t - 1) + _MARGIN
    q2[idx("mean_loss") + ar, 1 + ar] = -eta * n
    k2[idx("is_expert"), 0] = 1.0
    k2[idx("expert_id") + ar, 1 + ar] = 1.0
    v2, o2 = np.zeros((d, 1)), np.zeros((1, d))
    v2[idx("expert_says"), 0] = 1.0
    o2[0, idx("vote")] = 1.0
    return TransformerWeights(mlp_in, mlp_bias, mlp_out, q1, k1, v1, o1, q2, k2, v2, o2)


def _binary(name, value, **kw):
    arr = as_array(name, value, dtype=np.int8, **kw)
    if np.any((arr != 0) & (arr != 1)):
        raise ValueError(f"{name} must hold only 0 and 1")
    return arr


def self_correction_prompt(history_preds, history_answers, history_verdicts, current_preds, *, horizon):
    r"""The prompt of attempt :math:`t`: :math:`T` record slots, :math:`K` expert tokens, the answer slot.

    Parameters
    ----------
    history_preds : {0,1} int array, shape (t-1, K)
        The experts' answers in the earlier attempts (``t - 1`` may be 0).
    history_answers : {0,1} int array, shape (t-1,)
        The model's answers in the earlier attempts.
    history_verdicts : {0,1} int array, shape (t-1,)
        The verifier's verdicts on them (1 = right).
    current_preds : {0,1} int array, shape (K,)
        The experts' answers to the current query.
    horizon : int
        Number of record slots :math:`T \ge t`.

    Returns
    -------
    ndarray, shape (T + K + 1, 4K + 7)
        One row per token, in the slot layout of :func:`slot_names`.

    Raises
    ------
    ValueError
        On entries other than 0/1, inconsistent shapes, or more history than ``horizon - 1`` attempts.

    Examples
    --------
    >>> tokens = self_correction_prompt(np.array([[1, 0]]), np.array([1]), np.array([0]),
    ...                                 np.array([0, 1]), horizon=3)
    >>> tokens.shape
    (6, 15)
    """
    current = _binary("current_preds", current_preds, ndim=1)
    k = current.size
    hp = _binary("history_preds", history_preds, ndim=2, min_size=0)
    if hp.shape[1:] != (k,) and hp.size > 0:
        raise ValueError(f"history_preds must have shape (t-1, {k}), got {hp.shape}")
    hp = hp.reshape(-1, k)
    ha = _binary("history_answers", history_answers, ndim=1, min_size=0)
    hv = _binary("history_verdicts", history_verdicts, ndim=1, min_size=0)
    if not hp.shape[0] == ha.size == hv.size:
        raise ValueError("history_preds, history_answers and history_verdicts must cover the same number "
                         f"of attempts, got {hp.shape[0]}, {ha.size} and {hv.size}")
    horizon = check_int("horizon", horizon, minimum=hp.shape[0] + 1)
    sl, done = _slots(k), hp.shape[0]
    tokens = np.zeros((horizon + k + 1, 4 * k + 7))
    tokens[:, sl["one"]] = 1.0
    tokens[:done, sl["is_record"]] = 1.0
    tokens[:done, sl["record_preds"]] = hp
    tokens[:done, sl["record_answer"]] = ha[:, None]
    tokens[:done, sl["record_verdict"]] = hv[:, None]
    experts = slice(horizon, horizon + k)
    tokens[experts, sl["is_expert"]] = 1.0
    tokens[experts, sl["expert_id"]] = np.eye(k)
    tokens[experts, sl["expert_says"]] = current[:, None]
    return tokens


def hedge_transformer_forward(weights, tokens):
    r"""Run the network on a prompt: MLP, then two causal softmax-attention layers, with residuals.

    Parameters
    ----------
    weights : TransformerWeights
        From :func:`hedge_transformer_weights`.
    tokens : array_like, shape (N, 4K + 7)
        A prompt from :func:`self_correction_prompt`.

    Returns
    -------
    ndarray, shape (N, 4K + 7)
        The residual stream after the last layer (float64); the vote is the ``vote`` slot of the
        last token.

    Raises
    ------
    ValueError
        If ``tokens`` is not a finite 2-D array of the width the weights expect.

    Examples
    --------
    >>> w = hedge_transformer_weights(2, 3, eta=1.0)
    >>> tokens = self_correction_prompt(np.array([[1, 0]]), np.array([1]), np.array([0]),
    ...                                 np.array([0, 1]), horizon=3)
    >>> round(float(hedge_transformer_forward(w, tokens)[-1, -1]), 4)   # expert 1 was right: vote ~ its answer
    0.7311
    """
    if not isinstance(weights, TransformerWeights):
        raise ValueError(f"weights must be a TransformerWeights, got {type(weights).__name__}")
    d = weights.mlp_in.shape[0]
    tokens = as_array("tokens", tokens, ndim=2, shape=(None, d))
    with jax.enable_x64(True):
        w = TransformerWeights(*(jnp.asarray(a, jnp.float64) for a in weights))
        return np.asarray(_forward(w, jnp.asarray(tokens, jnp.float64)))


@jax.jit
def _forward(w, h):
    causal = jnp.tril(jnp.ones((h.shape[0], h.shape[0]), dtype=bool))
    h = h + jax.nn.relu(h @ w.mlp_in + w.mlp_bias) @ w.mlp_out
    h = h + attention.softmax_attention(h @ w.q1, h @ w.k1, h @ w.v1, scale=1.0, mask=causal) @ w.o1
    return h + attention.softmax_attention(h @ w.q2, h @ w.k2, h @ w.v2, scale=1.0, mask=causal) @ w.o2


def _record_loss(preds, answer, verdict):
    """The MLP on a record token: loss of every expert, 1 - parity(y, a, c), with ReLUs."""
    z = preds + answer + verdict
    return 1.0 - (z - 2.0 * jax.nn.relu(z - 1.0) + 2.0 * jax.nn.relu(z - 2.0))


@jax.jit
def _sessions(preds, feedback, eta, show):
    """Sessions attempt by attempt (lax.scan over attempts, sessions batched); answer-slot rows only."""
    s, t, k = preds.shape
    n = t + k + 1
    beta = eta * (t - 1) + _MARGIN
    keys2 = jnp.zeros((n, k + 1), preds.dtype).at[t:t + k, 0].set(1.0).at[t:t + k, 1:].set(jnp.eye(k))
    q1, k1 = jnp.zeros((s, 1, 1), preds.dtype), jnp.zeros((s, n, 1), preds.dtype)

    def attempt(values1, inputs):
        r, y, f = inputs                                                         # y (S, K), f (S,)
        mean_loss = attention.softmax_attention(q1, k1, values1, scale=1.0)[:, 0]     # (S, K) = L / N
        q2 = jnp.concatenate([jnp.full((s, 1), beta), -eta * n * mean_loss], axis=1)[:, None]
        v2 = jnp.zeros((s, n, 1), preds.dtype).at[:, t:t + k, 0].set(y)
        vote = attention.softmax_attention(q2, keys2, v2, scale=1.0)[:, 0, 0]
        answer = (vote >= 0.5 - TIE_TOLERANCE).astype(preds.dtype)
        verdict = (answer == f).astype(preds.dtype)
        record = show * _record_loss(y, answer[:, None], verdict[:, None])          # blank if not shown
        return values1.at[:, r].set(record), (answer, vote)

    xs = (jnp.arange(t), jnp.swapaxes(preds, 0, 1), jnp.swapaxes(feedback, 0, 1))
    _, (answers, votes) = jax.lax.scan(attempt, jnp.zeros((s, n, k), preds.dtype), xs)
    return answers.T, votes.T


def hedge_transformer_session(expert_preds, feedback, *, eta, show_verdicts=True):
    r"""Run self-correction sessions with the network: prompt, answer, verdict, next prompt.

    At attempt :math:`t` the network reads the prompt of :func:`self_correction_prompt` (records of
    attempts :math:`1..t-1`), answers at the answer slot, and the verifier's verdict on that answer
    (right when it equals ``feedback[t]``) fills record slot :math:`t` for the next attempt. The
    answer slot's output depends on the other tokens only through the MLP's ``loss`` slot and the
    embedding slots read by attention 2, which no layer writes, so only the answer slot's row of each
    attention layer is computed; a record's MLP output is computed once, when it is written (the
    unit tests compare with :func:`hedge_transformer_forward` on full prompts).

    Parameters
    ----------
    expert_preds : {0,1} int array, shape (S, T, K)
        The experts' answers in each session (``T`` is the horizon).
    feedback : {0,1} int array, shape (S, T)
        The label each verdict is judged against (the true label for a truthful verifier).
    eta : float
        Hedge's learning rate :math:`\eta > 0`.
    show_verdicts : bool, default True
        If False, the records stay blank: the same network without feedback (a control).

    Returns
    -------
    answers : int8 ndarray, shape (S, T)
    votes : ndarray, shape (S, T)

    Raises
    ------
    ValueError
        On entries other than 0/1, shape mismatches, a non-positive ``eta`` or a non-boolean
        ``show_verdicts``.

    Notes
    -----
    Runs in float64 (whatever the global JAX setting), so the votes equal Hedge's to about 1e-13
    and ties (votes within :data:`paperlib.online.self_correction.TIE_TOLERANCE` of 1/2) are never split
    by rounding.

    Examples
    --------
    >>> preds = np.array([[[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0]]])   # 1 session, 3 attempts, K = 4
    >>> answers, votes = hedge_transformer_session(preds, preds[..., 3], eta=1.0)
    >>> answers.tolist()
    [[1, 1, 0]]
    """
    preds = _binary("expert_preds", expert_preds, ndim=3)
    s, t, k = preds.shape
    fb = _binary("feedback", feedback, shape=(s, t))
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    show_verdicts = check_bool("show_verdicts", show_verdicts)
    with jax.enable_x64(True):
        answers, votes = _sessions(jnp.asarray(preds, jnp.float64), jnp.asarray(fb, jnp.float64),
                                   jnp.float64(eta), jnp.float64(show_verdicts))
        return np.asarray(answers).astype(np.int8), np.asarray(votes)


def hedge_transformer_loop(expert_preds, feedback, *, eta, attempts=None):
    r"""One self-correction session run with the full network and its real weights, attempt by attempt.

    Algorithm: build the weights with :func:`hedge_transformer_weights` for :math:`(K, T, \eta)`; at
    attempt :math:`t` write the prompt of :func:`self_correction_prompt` (records of attempts
    :math:`1..t-1`, the experts' current answers), run :func:`hedge_transformer_forward` on the whole
    prompt, read the vote at the answer slot, answer :math:`\mathbb 1[\text{vote} \ge 1/2]` and write the
    verifier's verdict on that answer (right when it equals ``feedback[t]``) into record slot :math:`t`.
    Unlike :func:`hedge_transformer_session`, which computes only the rows that are read, every token
    goes through every weight matrix, so this is the slow reference (:math:`O(N^2 d + N d^2)` per
    attempt, with :math:`N = T + K + 1`, :math:`d = 4K + 7`).

    Parameters
    ----------
    expert_preds : {0,1} int array, shape (T, K)
        The experts' answers in one session (``T`` is the horizon the weights are built for).
    feedback : {0,1} int array, shape (T,)
        The label each verdict is judged against.
    eta : float
        Hedge's learning rate :math:`\eta > 0`.
    attempts : int, optional
        Run only the first ``attempts`` attempts (``1 <= attempts <= T``; default all ``T``).

    Returns
    -------
    answers : int8 ndarray, shape (attempts,)
    votes : ndarray, shape (attempts,)

    Raises
    ------
    ValueError
        On entries other than 0/1, shape mismatches, a non-positive ``eta`` or ``attempts`` outside
        ``[1, T]``.

    Examples
    --------
    >>> preds = np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0]])   # 3 attempts, K = 4
    >>> answers, votes = hedge_transformer_loop(preds, preds[:, 3], eta=1.0)
    >>> answers.tolist(), np.round(votes, 4).tolist()
    ([1, 1, 0], [0.5, 0.5, 0.2689])
    """
    preds = _binary("expert_preds", expert_preds, ndim=2)
    t_max, k = preds.shape
    fb = _binary("feedback", feedback, shape=(t_max,))
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    attempts = t_max if attempts is None else check_int("attempts", attempts, minimum=1, maximum=t_max)
    weights = hedge_transformer_weights(k, t_max, eta=eta)
    tokens = self_correction_prompt(np.zeros((0, k), int), np.zeros(0, int), np.zeros(0, int), preds[0],
                                    horizon=t_max)
    sl = _slots(k)
    experts = slice(t_max, t_max + k)
    answers, votes = np.zeros(attempts, np.int8), np.zeros(attempts)
    with jax.enable_x64(True):   # the same computation as hedge_transformer_forward, weights cast once
        w = TransformerWeights(*(jnp.asarray(a, jnp.float64) for a in weights))
        for t in range(attempts):
            tokens[experts, sl["expert_says"]] = preds[t][:, None]
            votes[t] = float(_forward(w, jnp.asarray(tokens, jnp.float64))[-1, sl["vote"].start])
            answers[t] = votes[t] >= 0.5 - TIE_TOLERANCE
            tokens[t, sl["is_record"]] = 1.0
            tokens[t, sl["record_preds"]] = preds[t]
            tokens[t, sl["record_answer"]] = answers[t]
            tokens[t, sl["record_verdict"]] = float(answers[t] == fb[t])
    return answers, votes
