r"""One causal Transformer that computes :math:`K` task experts' answers and runs Hedge over them.

This extends :mod:`paperlib.online.in_context_hedge`, whose network reads the experts' answers from its
prompt. Here the prompt holds only the **queries**: the network computes every expert's answer
itself, so one set of weights serves :math:`K` tasks (linear-threshold rules
:math:`x \mapsto \mathbb 1[w_j\cdot x > 0]`) without being told which one a session belongs to; the
only task information is in the verifier's verdicts on its own earlier answers.

At attempt :math:`t` the prompt has :math:`N = T + K + 1` tokens: :math:`T` **record** slots (slot
:math:`s < t` holds the query :math:`x_s \in \mathbb R^D`, the network's answer :math:`a_s` and the
verdict :math:`c_s`; later slots are blank), :math:`K` **expert** tokens (identity :math:`e_j` only)
and the **query** token :math:`x_t`, last, where the answer is read (1 when the vote is at least 1/2).

Layers (residual connections, no layer norm), with steepness :math:`M`:

1. **MLP, the experts**: :math:`\hat y_j = (M w_j\cdot x)_+ - (M w_j\cdot x - 1)_+`, on record
   queries and on the current query (separate slots). It equals :math:`\mathbb 1[w_j\cdot x > 0]`
   unless :math:`0 < w_j\cdot x < 1/M` (a *near-tie*, counted by :func:`near_ties`).
2. **MLP, the losses**: on a record, :math:`\Lambda_{s,j} = 1 - \mathrm{parity}(\hat y_{s,j}+a_s+c_s)`
   with three ReLUs per expert, as in :func:`paperlib.online.in_context_hedge.hedge_transformer_weights`.
3. **Attention, the counter**: zero scores; the query token gets :math:`L_t / N`.
4. **Attention, the weights**: query :math:`(\beta, -\eta N L_t/N)`, keys :math:`(1, e_j)` on expert
   tokens, values :math:`e_j`: the query token gets :math:`\mathrm{softmax}(-\eta L_t)` (the other
   tokens' share is below :math:`N e^{-50}`, :math:`\beta = \eta(T-1) + 50`).
5. **MLP, the vote**: :math:`\sum_j (\pi_j + \hat y_{t,j} - 1)_+`, which is
   :math:`\sum_j \pi_j \hat y_{t,j}` for :math:`\hat y \in \{0,1\}` and :math:`\pi_j \in [0,1]`.

References
----------
B. Huang et al., "Sample Complexity and Representation Ability of Test-time Scaling Paradigms", ICLR
2026, arXiv:2506.05295 (Section 4; their construction merges arbitrary expert Transformers and a
regret-minimising one, and is not this one, which is ours).
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
from .in_context_hedge import _layout
from .self_correction import TIE_TOLERANCE

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["ExpertsWeights", "experts_transformer_weights", "experts_prompt", "experts_transformer_forward",
           "experts_transformer_session", "near_ties"]

_MARGIN = 50.0  # beta - eta * (largest possible loss): the non-expert tokens' share is below N exp(-50)


def _slots(k, dim):
    return _layout([("one", 1), ("is_record", 1), ("is_expert", 1), ("record_x", dim), ("record_answer", 1),
                    ("record_verdict", 1), ("query_x", dim), ("expert_id", k), ("record_preds", k),
                    ("query_preds", k), ("loss", k), ("mean_loss", k), ("weights", k), ("vote", 1)])


class ExpertsWeights(NamedTuple):
    """Weights of the five-layer network (width ``d = 6K + 2D + 6``); see :func:`experts_transformer_weights`.

    Attributes
    ----------
    e_in, e_bias, e_out : arrays, shapes (d, 4K), (4K,), (4K, d)   (MLP 1, the experts)
    l_in, l_bias, l_out : arrays, shapes (d, 3K+1), (3K+1,), (3K+1, d)   (MLP 2, the losses)
    q1, k1, v1, o1 : arrays, shapes (d, 1), (d, 1), (d, K), (K, d)   (attention 1, the counter)
    q2, k2, v2, o2 : arrays, shapes (d, K+1), (d, K+1), (d, K), (K, d)   (attention 2, the weights)
    v_in, v_bias, v_out : arrays, shapes (d, K), (K,), (K, d)   (MLP 3, the vote)
    """

    e_in: np.ndarray
    e_bias: np.ndarray
    e_out: np.ndarray
    l_in: np.ndarray
    l_bias: np.ndarray
    l_out: np.ndarray
    q1: np.ndarray
    k1: np.ndarray
    v1: np.ndarray
    o1: np.ndarray
    q2: np.ndarray
    k2: np.ndarray
    v2: np.ndarray
    o2: np.ndarray
    v_in: np.ndarray
    v_bias: np.ndarray
    v_out: np.ndarray


def experts_transformer_weights(experts, horizon, *, eta, steepness):
    r"""The fixed weights of the multi-task network for experts :math:`w_1..w_K`, horizon :math:`T`, rate :math:`\eta`.

    Parameters
    ----------
    experts : array_like, shape (K, D)
        The task experts' weight vectors (expert :math:`j` answers :math:`\mathbb 1[w_j\cdot x > 0]`).
    horizon : int
        Number of record slots :math:`T \ge 1` (the longest session).
    eta : float
        Hedge's learning rate :math:`\eta > 0`.
    steepness : float
        Slope :math:`M > 0` of the ramps; an expert's answer is exact unless :math:`0 < w_j\cdot x < 1/M`.

    Returns
    -------
    ExpertsWeights
        Dense float64 matrices; no weight depends on the hidden task.

    Raises
    ------
    ValueError
        If ``experts`` is not a finite non-empty 2-D array, ``horizon`` not a positive integer, or
        ``eta`` or ``steepness`` not positive.

    Examples
    --------
    >>> w = experts_transformer_weights(np.eye(2), 3, eta=1.0, steepness=100.0)
    >>> w.e_in.shape, w.q2.shape, w.v_out.shape
    ((22, 8), (22, 3), (2, 22))
    """
    experts = as_array("experts", experts, ndim=2)
    t = check_int("horizon", horizon, minimum=1)
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    m = check_real("steepness", steepness, minimum=0.0, strict_min=True)
    k, dim = experts.shape
    sl, d, n = _slots(k, dim), 6 * k + 2 * dim + 6, t + k + 1
    at = lambda name: sl[name].start + np.arange(sl[name].stop - sl[name].start)  # noqa: E731
    ar = np.arange(k)
    # MLP 1: units (4 blocks of K) relu(M w.x_rec), relu(M w.x_rec - 1), relu(M w.x_q), relu(M w.x_q - 1)
    e_in, e_bias, e_out = np.zeros((d, 4 * k)), np.zeros(4 * k), np.zeros((4 * k, d))
    for block, (src, dst, shift) in enumerate([("record_x", "record_preds", 0.0), ("record_x", "record_preds", 1.0),
                                               ("query_x", "query_preds", 0.0), ("query_x", "query_preds", 1.0)]):
        cols = block * k + ar
        e_in[np.ix_(at(src), cols)] = m * experts.T
        e_bias[cols] = -shift
        e_out[cols, at(dst)] = -1.0 if shift else 1.0
    # MLP 2: unit 0 = is_record; units 1 + 3j + (0, 1, 2) = relu(z_j - (0, 1, 2)), z_j = y_j + a + c
    l_in, l_bias, l_out = np.zeros((d, 3 * k + 1)), np.zeros(3 * k + 1), np.zeros((3 * k + 1, d))
    l_in[sl["is_record"].start, 0] = 1.0
    l_out[0, at("loss")] = 1.0
    for off in range(3):
        cols = 1 + 3 * ar + off
        l_in[at("record_preds"), cols] = 1.0
        l_in[sl["record_answer"].start, cols] = 1.0
        l_in[sl["record_verdict"].start, cols] = 1.0
        l_bias[cols] = -float(off)
        l_out[cols, at("loss")] = (-1.0, 2.0, -2.0)[off]
    # attention 1: zero scores, the loss slot averaged into mean_loss
    q1, k1, v1, o1 = np.zeros((d, 1)), np.zeros((d, 1)), np.zeros((d, k)), np.zeros((k, d))
    v1[at("loss"), ar] = 1.0
    o1[ar, at("mean_loss")] = 1.0
    # attention 2: query (beta, -eta N mean_loss), key (is_expert, expert_id), value expert_id -> weights
    q2, k2, v2, o2 = np.zeros((d, k + 1)), np.zeros((d, k + 1)), np.zeros((d, k)), np.zeros((k, d))
    q2[sl["one"].start, 0] = eta * (t - 1) + _MARGIN
    q2[at("mean_loss"), 1 + ar] = -eta * n
    k2[sl["is_expert"].start, 0] = 1.0
    k2[at("expert_id"), 1 + ar] = 1.0
    v2[at("expert_id"), ar] = 1.0
    o2[ar, at("weights")] = 1.0
    # MLP 3: vote = sum_j relu(weights_j + query_preds_j - 1)
    v_in, v_bias, v_out = np.zeros((d, k)), -np.ones(k), np.zeros((k, d))
    v_in[at("weights"), ar] = 1.0
    v_in[at("query_preds"), ar] = 1.0
    v_out[ar, sl["vote"].start] = 1.0
    return ExpertsWeights(e_in, e_bias, e_out, l_in, l_bias, l_out, q1, k1, v1, o1, q2, k2, v2, o2,
                          v_in, v_bias, v_out)


def _sizes(weights):
    if not isinstance(weights, ExpertsWeights):
        raise ValueError(f"weights must be an ExpertsWeights, got {type(weights).__name__}")
    k = weights.v_in.shape[1]
    return k, (weights.e_in.shape[0] - 6 * k - 6) // 2


def _binary(name, value, **kw):
    arr = as_array(name, value, dtype=np.int8, **kw)
    if np.any((arr != 0) & (arr != 1)):
        raise ValueError(f"{name} must hold only 0 and 1")
    return arr


def experts_prompt(history_queries, history_answers, history_verdicts, query, *, num_experts, horizon):
    r"""The prompt of attempt :math:`t`: :math:`T` record slots, :math:`K` expert tokens, the query token.

    Parameters
    ----------
    history_queries : array_like, shape (t-1, D)
        The earlier queries (``t - 1`` may be 0).
    history_answers : {0,1} int array, shape (t-1,)
        The network's answers to them.
    history_verdicts : {0,1} int array, shape (t-1,)
        The verifier's verdicts on those answers (1 = right).
    query : array_like, shape (D,)
        The current query :math:`x_t`.
    num_experts : int
        :math:`K \ge 1`.
    horizon : int
        Number of record slots :math:`T \ge t`.

    Returns
    -------
    ndarray, shape (T + K + 1, 6K + 2D + 6)

    Raises
    ------
    ValueError
        On non-finite queries, entries other than 0/1, inconsistent lengths or dimensions, or more
        history than ``horizon - 1`` attempts.

    Examples
    --------
    >>> experts_prompt(np.array([[0.5, -1.0]]), np.array([1]), np.array([0]), np.array([1.0, 2.0]),
    ...                num_experts=2, horizon=3).shape
    (6, 22)
    """
    q = as_array("query", query, ndim=1)
    hq = as_array("history_queries", history_queries, ndim=2, min_size=0)
    if hq.size and hq.shape[1] != q.size:
        raise ValueError(f"history_queries must have shape (t-1, {q.size}), got {hq.shape}")
    hq = hq.reshape(-1, q.size)
    ha = _binary("history_answers", history_answers, ndim=1, min_size=0)
    hv = _binary("history_verdicts", history_verdicts, ndim=1, min_size=0)
    if not hq.shape[0] == ha.size == hv.size:
        raise ValueError("history_queries, history_answers and history_verdicts must cover the same number "
                         f"of attempts, got {hq.shape[0]}, {ha.size} and {hv.size}")
    k = check_int("num_experts", num_experts, minimum=1)
    horizon = check_int("horizon", horizon, minimum=hq.shape[0] + 1)
    sl, done = _slots(k, q.size), hq.shape[0]
    tokens = np.zeros((horizon + k + 1, 6 * k + 2 * q.size + 6))
    tokens[:, sl["one"]] = 1.0
    tokens[:done, sl["is_record"]] = 1.0
    tokens[:done, sl["record_x"]] = hq
    tokens[:done, sl["record_answer"]] = ha[:, None]
    tokens[:done, sl["record_verdict"]] = hv[:, None]
    tokens[horizon:horizon + k, sl["is_expert"]] = 1.0
    tokens[horizon:horizon + k, sl["expert_id"]] = np.eye(k)
    tokens[-1, sl["query_x"]] = q
    return tokens


@jax.jit
def _forward(w, h):
    causal = jnp.tril(jnp.ones((h.shape[-2], h.shape[-2]), dtype=bool))
    mlp = lambda h, a, b, c: jax.nn.relu(h @ a + b) @ c  # noqa: E731
    h = h + mlp(h, w.e_in, w.e_bias, w.e_out)
    h = h + mlp(h, w.l_in, w.l_bias, w.l_out)
    h = h + attention.softmax_attention(h @ w.q1, h @ w.k1, h @ w.v1, scale=1.0, mask=causal) @ w.o1
    h = h + attention.softmax_attention(h @ w.q2, h @ w.k2, h @ w.v2, scale=1.0, mask=causal) @ w.o2
    return h + mlp(h, w.v_in, w.v_bias, w.v_out)


def experts_transformer_forward(weights, tokens):
    r"""Run the network on a prompt; the vote is the last slot of the last token.

    Parameters
    ----------
    weights : ExpertsWeights
        From :func:`experts_transformer_weights`.
    tokens : array_like, shape (N, 6K + 2D + 6)
        A prompt from :func:`experts_prompt`.

    Returns
    -------
    ndarray, shape (N, 6K + 2D + 6)
        The residual stream after the last layer (float64).

    Raises
    ------
    ValueError
        If ``weights`` is not an ExpertsWeights or ``tokens`` is not a finite 2-D array of its width.

    Examples
    --------
    >>> w = experts_transformer_weights(np.array([[1.0, 0.0], [0.0, 1.0]]), 3, eta=1.0, steepness=100.0)
    >>> p = experts_prompt(np.array([[0.5, -1.0]]), np.array([1]), np.array([0]), np.array([-1.0, 2.0]),
    ...                    num_experts=2, horizon=3)
    >>> round(float(experts_transformer_forward(w, p)[-1, -1]), 4)   # expert 1 was right and says 1
    0.7311
    """
    _sizes(weights)
    tokens = as_array("tokens", tokens, ndim=2, shape=(None, weights.e_in.shape[0]))
    with jax.enable_x64(True):
        w = ExpertsWeights(*(jnp.asarray(a, jnp.float64) for a in weights))
        return np.asarray(_forward(w, jnp.asarray(tokens, jnp.float64)))


@partial(jax.jit, static_argnames=("attempts",))
def _run(w, tokens, queries, feedback, show, attempts):
    k = w.v_in.shape[1]
    dim = queries.shape[-1]
    sl = _slots(k, dim)

    def attempt(toks, inputs):
        t, x, f = inputs                                                   # x (S, D), f (S,)
        toks = toks.at[:, -1, sl["query_x"]].set(x)
        vote = jax.vmap(lambda h: _forward(w, h)[-1, sl["vote"].start])(toks)
        answer = (vote >= 0.5 - TIE_TOLERANCE).astype(toks.dtype)
        verdict = (answer == f).astype(toks.dtype)
        row = jnp.concatenate([jnp.ones_like(x[:, :1]), show * jnp.ones_like(x[:, :1]), jnp.zeros_like(x[:, :1]),
                               show * x, show * answer[:, None], show * verdict[:, None]], axis=1)
        toks = toks.at[:, t, :sl["record_verdict"].stop].set(row)
        return toks, (answer, vote)

    xs = (jnp.arange(attempts), jnp.swapaxes(queries, 0, 1)[:attempts], jnp.swapaxes(feedback, 0, 1)[:attempts])
    _, (answers, votes) = jax.lax.scan(attempt, tokens, xs)
    return answers.T, votes.T


def experts_transformer_session(weights, queries, feedback, *, attempts=None, show_verdicts=True):
    r"""Self-correction sessions run through the full network, attempt by attempt.

    At attempt :math:`t` the prompt of :func:`experts_prompt` (the records of attempts :math:`1..t-1`
    and the query :math:`x_t`) goes through every layer of :func:`experts_transformer_forward`; the
    vote at the query token gives the answer, and the verifier's verdict on it (right when it equals
    ``feedback[t]``) is written, with :math:`x_t` and the answer, into record slot :math:`t`.

    Parameters
    ----------
    weights : ExpertsWeights
        From :func:`experts_transformer_weights` (horizon :math:`T`).
    queries : array_like, shape (S, T, D)
        The queries of :math:`S` sessions.
    feedback : {0,1} int array, shape (S, T)
        The label each verdict is judged against (the true label for a truthful verifier).
    attempts : int, optional
        Run only the first ``attempts`` attempts (``1 <= attempts <= T``; default ``T``).
    show_verdicts : bool, default True
        If False the records stay blank: the same network without feedback (a control).

    Returns
    -------
    answers : int8 ndarray, shape (S, attempts)
    votes : ndarray, shape (S, attempts)

    Raises
    ------
    ValueError
        On a bad ``weights``, shapes that do not match it, non-finite queries, entries of
        ``feedback`` other than 0/1, ``attempts`` outside ``[1, T]`` or a non-boolean ``show_verdicts``.

    Notes
    -----
    Cost :math:`O(N^2 d + N d^2)` per attempt and session, with :math:`N = T + K + 1` and
    :math:`d = 6K + 2D + 6`: every token goes through every weight matrix.

    Examples
    --------
    >>> w = experts_transformer_weights(np.array([[1.0, 0.0], [0.0, 1.0]]), 3, eta=1.0, steepness=100.0)
    >>> x = np.array([[[1.0, -1.0], [-2.0, 1.0], [1.0, 1.0]]])          # 1 session, 3 queries, D = 2
    >>> answers, votes = experts_transformer_session(w, x, np.array([[0, 1, 1]]))   # hidden task: expert 1
    >>> answers.tolist()
    [[1, 1, 1]]
    """
    k, dim = _sizes(weights)
    queries = as_array("queries", queries, ndim=3)
    if queries.shape[2] != dim:
        raise ValueError(f"queries must have shape (S, T, {dim}), got {queries.shape}")
    s, t = queries.shape[:2]
    fb = _binary("feedback", feedback, shape=(s, t))
    attempts = t if attempts is None else check_int("attempts", attempts, minimum=1, maximum=t)
    show = check_bool("show_verdicts", show_verdicts)
    tokens = experts_prompt(np.zeros((0, dim)), np.zeros(0, int), np.zeros(0, int), queries[0, 0],
                            num_experts=k, horizon=t)
    with jax.enable_x64(True):
        w = ExpertsWeights(*(jnp.asarray(a, jnp.float64) for a in weights))
        toks = jnp.broadcast_to(jnp.asarray(tokens, jnp.float64), (s, *tokens.shape))
        answers, votes = _run(w, toks, jnp.asarray(queries, jnp.float64), jnp.asarray(fb, jnp.float64),
                              jnp.float64(show), attempts)
        return np.asarray(answers).astype(np.int8), np.asarray(votes)


def near_ties(experts, queries, *, steepness):
    r"""How many expert answers the ramps get wrong: entries with :math:`0 < w_j\cdot x < 1/M`.

    Parameters
    ----------
    experts : array_like, shape (K, D)
    queries : array_like, shape (n, D) or (S, T, D)
    steepness : float
        The ramps' slope :math:`M > 0`.

    Returns
    -------
    int
        The number of (query, expert) pairs where the ramp is not the 0/1 answer.

    Raises
    ------
    ValueError
        On non-finite or mismatched arrays or a non-positive ``steepness``.

    Examples
    --------
    >>> near_ties(np.eye(2), np.array([[0.001, -1.0], [0.5, 0.0]]), steepness=100.0)
    1
    """
    experts = as_array("experts", experts, ndim=2)
    queries = as_array("queries", queries, ndim=(2, 3))
    if queries.shape[-1] != experts.shape[1]:
        raise ValueError(f"queries must end in dimension {experts.shape[1]}, got {queries.shape}")
    m = check_real("steepness", steepness, minimum=0.0, strict_min=True)
    dots = queries @ experts.T
    return int(np.sum((dots > 0) & (dots < 1.0 / m)))
