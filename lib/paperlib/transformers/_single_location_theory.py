"""Single-location regression: the population theory (risk of the order parameters, Bayes risk, closed forms).

This private module holds the population-level half of :mod:`paperlib.transformers.single_location`:
the :math:`d`-free Monte Carlo risk of any seven overlaps (:func:`order_parameter_risk`), the Bayes
risk (:func:`bayes_risk`), the closed-form optimum of linear attention
(:func:`linear_population_risk`) and the population fit of the overlaps (:func:`fit_population`).
Its public names are re-exported by :mod:`paperlib.transformers.single_location`, where they are
documented; import them from there.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize

from ..core._validation import as_array, check_bool, check_real, is_traced
from ._single_location_model import OrderParameters, _check_activation, _check_task, _readout
from ._single_location_model import sample_projections  # noqa: F401  (used by the docstring examples)

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

_N_THETA = {"softmax": 4, "linear": 4, "exp": 4, "erf": 5}   # erf also learns its offset beta


@partial(jax.jit, static_argnames=("activation",))
def _reduced_risk(op, proj, activation, offset=0.0):
    h, g, w1, w2, y = proj["h"], proj["g"], proj["w1"], proj["w2"], proj["y"]
    sk = jnp.sqrt(jnp.maximum(op.q_k, 0.0))
    rho = jnp.where(sk > 0, op.q_kv / jnp.where(sk > 0, sk, 1.0), 0.0)
    resid = jnp.sqrt(jnp.maximum(op.q_v - rho**2, 0.0))
    s = op.a * h + op.b * g + sk * w1
    u = op.c * h + op.e * g + rho * w1 + resid * w2
    return jnp.mean((_readout(s, u, activation, offset) - y) ** 2)


@partial(jax.jit, static_argnames=("activation",))
def _reduced_risk_stderr(op, proj, activation, offset=0.0):
    # Monte Carlo standard error of _reduced_risk: std of the per-sequence squared errors / sqrt(N)
    h, g, w1, w2, y = proj["h"], proj["g"], proj["w1"], proj["w2"], proj["y"]
    sk = jnp.sqrt(jnp.maximum(op.q_k, 0.0))
    rho = jnp.where(sk > 0, op.q_kv / jnp.where(sk > 0, sk, 1.0), 0.0)
    resid = jnp.sqrt(jnp.maximum(op.q_v - rho**2, 0.0))
    sq = (_readout(op.a * h + op.b * g + sk * w1, op.c * h + op.e * g + rho * w1 + resid * w2, activation, offset) - y) ** 2
    return jnp.std(sq) / jnp.sqrt(sq.shape[0])


def order_parameter_risk(op: OrderParameters, proj, *, activation: str, return_stderr: bool = False, offset: float = 0.0):
    r"""Population risk :math:`\mathbb E(y-f_{k,v}(X))^2` as a function of the order parameters only.

    For Gaussian tokens, :math:`s_\ell = a h_\ell + b g_\ell + \zeta_\ell` and
    :math:`u_\ell = c h_\ell + e g_\ell + \chi_\ell` with :math:`(\zeta_\ell,\chi_\ell)` i.i.d. centred
    Gaussian of covariance :math:`[[Q_k, Q_{kv}],[Q_{kv}, Q_v]]`, independent of :math:`(h, g)`. The
    risk is averaged over the Monte Carlo sample ``proj`` (common random numbers across calls).

    Parameters
    ----------
    op : OrderParameters
        Scalar fields, or fields of shape (m,) for a batch of m models.
    proj : dict
        Output of :func:`sample_projections`.
    activation : {"softmax", "linear", "exp", "erf"}
    return_stderr : bool, default False
        Also return the Monte Carlo standard error of the risk (standard deviation of the
        per-sequence squared errors over :math:`\sqrt N`; the squared errors are heavy-tailed here,
        so this is much larger than the Gaussian guess :math:`\sqrt{2/N}\,\mathcal E`).
    offset : float, default 0.0
        The offset :math:`\beta` of the element-wise activation :math:`1+\mathrm{erf}(s+\beta)`
        (ignored by the other activations).

    Returns
    -------
    float array, shape () or (m,)
        The risk; with ``return_stderr``, a pair ``(risk, stderr)`` of such arrays.

    Raises
    ------
    ValueError
        On an unknown activation, an ``op`` that is not seven overlaps (or has non-finite entries),
        a negative ``q_k``/``q_v``, or a non-boolean ``return_stderr``.

    Examples
    --------
    >>> proj = sample_projections(200, 3, 1.0, 0.1, rng=np.random.default_rng(0))
    >>> op = OrderParameters(1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    >>> round(float(order_parameter_risk(op, proj, activation="softmax")), 3)
    0.406
    """
    _check_activation(activation)
    return_stderr = check_bool("return_stderr", return_stderr)
    offset = check_real("offset", offset)
    if not isinstance(op, tuple) or len(op) != 7:
        raise ValueError(f"op must be an OrderParameters (seven overlaps), got {type(op).__name__}")
    op = OrderParameters(*op)
    for name, val in op._asdict().items():
        if not is_traced(val):
            as_array(f"op.{name}", val, ndim=(0, 1), dtype=None)
    for name in ("q_k", "q_v"):
        val = getattr(op, name)
        if not isinstance(val, jax.core.Tracer) and bool(jnp.any(jnp.asarray(val) < -1e-12)):
            raise ValueError(f"op.{name} must be >= 0, got {val}")
    fns = (_reduced_risk, _reduced_risk_stderr) if return_stderr else (_reduced_risk,)
    if jnp.ndim(op.a) > 0:  # a batch of models
        out = tuple(jax.vmap(lambda o, f=f: f(o, proj, activation, offset))(op) for f in fns)
    else:
        out = tuple(f(op, proj, activation, offset) for f in fns)
    return out if return_stderr else out[0]


def bayes_risk(proj, *, mu: float, sigma: float):
    r"""Monte Carlo Bayes risk of spiked SLR (paper Prop. 4.2).

    The posterior of the location is :math:`P(\ell^*=\ell\mid X)=\mathrm{softmax}(\mu h)_\ell`, so
    :math:`\mathbb E[y\mid X]=\sum_\ell p_\ell g_\ell` and :math:`R_B=\mathbb E(y-\mathbb E[y\mid X])^2`,
    estimated by the mean squared error of the posterior mean on the sample ``proj`` (so that risk
    differences against other predictors on the same sample are paired). Computed directly from the
    posterior (not through the attention code), an independent reference for softmax attention at
    :math:`k=\mu k^*, v=v^*`.

    Parameters
    ----------
    proj : dict
        Output of :func:`sample_projections` (``h``, ``g`` and ``y`` are used).
    mu, sigma : float
        Spike strength and noise level (>= 0); ``mu`` must be the one ``proj`` was drawn with.

    Returns
    -------
    float array, shape ()

    Raises
    ------
    ValueError
        On negative ``mu`` or ``sigma``.

    Examples
    --------
    >>> proj = sample_projections(200, 3, 1.0, 0.1, rng=np.random.default_rng(0))
    >>> round(float(bayes_risk(proj, mu=1.0, sigma=0.1)), 3)
    0.406
    """
    mu = check_real("mu", mu, minimum=0.0)
    sigma = check_real("sigma", sigma, minimum=0.0)
    return _bayes_risk(proj["h"], proj["g"], proj["y"], mu)


@jax.jit
def _bayes_risk(h, g, y, mu):
    p = jax.nn.softmax(mu * h, axis=-1)
    return jnp.mean((jnp.sum(p * g, -1) - y) ** 2)


def linear_population_risk(L: int, mu: float, sigma: float):
    r"""Closed-form population optimum of linear attention :math:`\phi(s)_\ell=1+s_\ell` on spiked SLR.

    Minimising :math:`\mathbb E(y-e\sum_\ell(1+a h_\ell)g_\ell)^2` (the off-diagonal overlaps and the
    orthogonal parts only add variance) gives :math:`a^*=\mu(L-1)/L` and

    .. math:: R_{\rm lin}=\sigma^2+\frac{L(L-1)}{L^2+(L-1)\mu^2}.

    Derived in the chapter ("Why it is true"); our own closed form for the paper's Sec. 4 result that
    linear attention stays above the Bayes risk.

    Parameters
    ----------
    L : int
        Sequence length (>= 1).
    mu, sigma : float
        Spike strength and noise level (>= 0).

    Returns
    -------
    risk : float
    a_opt, e_opt : float
        The optimal key and value overlaps.

    Raises
    ------
    ValueError
        On invalid ``L``, ``mu`` or ``sigma``.

    Examples
    --------
    >>> [round(float(t), 4) for t in linear_population_risk(4, 2.0, 0.1)]
    [0.4386, 1.5, 0.1429]
    """
    L, mu, sigma = _check_task(L, mu, sigma)
    a = mu * (L - 1) / L
    denom = L * (1 + a**2) + 2 * a * mu + a**2 * mu**2
    e = (1 + a * mu) / denom
    return sigma**2 + L * (L - 1) / (L**2 + (L - 1) * mu**2), a, e


def _pop_objective(theta, proj, activation):
    zero = jnp.zeros((), theta.dtype)
    op = OrderParameters(theta[0], theta[1], theta[2], theta[3], zero, zero, zero)
    return _reduced_risk(op, proj, activation, theta[4] if activation == "erf" else 0.0)


_pop_value_and_grad = jax.jit(jax.value_and_grad(_pop_objective), static_argnames=("activation",))


@partial(jax.jit, static_argnames=("activation",))
def _sandwich_stderr(theta, proj, activation):
    # per-sequence losses l_i(theta); Var(theta_hat) ~ H^-1 Cov(grad l_i) H^-1 / N (M-estimator)
    def per_sample(t):
        zero = jnp.zeros((), t.dtype)
        op = OrderParameters(t[0], t[1], t[2], t[3], zero, zero, zero)
        h, g, y = proj["h"], proj["g"], proj["y"]
        beta = t[4] if activation == "erf" else 0.0
        return (_readout(op.a * h + op.b * g, op.c * h + op.e * g, activation, beta) - y) ** 2

    jac = jax.jacfwd(per_sample)(theta)                    # (N, 4) or (N, 5)
    hess = jax.hessian(lambda t: jnp.mean(per_sample(t)))(theta)
    h_inv = jnp.linalg.pinv(hess)
    cov = h_inv @ jnp.cov(jac, rowvar=False) @ h_inv / jac.shape[0]
    return jnp.sqrt(jnp.diag(cov))


def fit_population(proj, *, activation: str, init=(0.5, 0.0, 0.0, 0.5)):
    r"""Minimise the population risk over the overlaps :math:`(a,b,c,e)` with :math:`Q=0`.

    For ``activation="erf"`` the offset :math:`\beta` of :math:`1+\mathrm{erf}(s+\beta)` is a fifth
    parameter, learned with the overlaps.

    Orthogonal components only add variance, so the population optimum has
    :math:`Q_k=Q_v=Q_{kv}=0`. L-BFGS (scipy) on the Monte Carlo risk with exact JAX gradients.

    Parameters
    ----------
    proj : dict
        Output of :func:`sample_projections` (fixed sample: common random numbers).
    activation : {"softmax", "linear", "exp", "erf"}
    init : sequence of 4 floats (5 for ``"erf"``)
        Starting :math:`(a,b,c,e)`, then :math:`\beta` for ``"erf"``.

    Returns
    -------
    risk : float
        Minimum Monte Carlo risk (in-sample, so slightly optimistic).
    theta : ndarray, shape (4,) or (5,)
        The minimiser :math:`(a,b,c,e)` (and :math:`\beta` for ``"erf"``).
    stderr : ndarray, shape (4,) or (5,)
        Monte Carlo standard errors of ``theta`` (M-estimator sandwich
        :math:`H^{-1}\mathrm{Cov}(\nabla\ell_i)H^{-1}/N`): how precisely the sample pins the minimiser.

    Raises
    ------
    ValueError
        On an unknown activation or an ``init`` of the wrong length.

    Examples
    --------
    >>> proj = sample_projections(200, 3, 1.0, 0.1, rng=np.random.default_rng(0))
    >>> risk, theta, stderr = fit_population(proj, activation="linear")
    >>> round(risk, 3), np.round(theta, 2).tolist()
    (0.483, [0.84, -0.06, 0.0, 0.26])
    """
    _check_activation(activation)
    init = as_array("init", init, shape=(_N_THETA[activation],), dtype=float)
    proj = {name: jnp.asarray(proj[name]) for name in ("h", "g", "y", "w1", "w2")}
    fun = lambda t: tuple(np.asarray(x, dtype=float) for x in _pop_value_and_grad(jnp.asarray(t), proj, activation))
    res = scipy.optimize.minimize(fun, init, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return float(res.fun), res.x, np.asarray(_sandwich_stderr(jnp.asarray(res.x), proj, activation))
