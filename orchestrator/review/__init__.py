"""Human review of a dataset, in one package: the review page (``app``, its HTTP edge ``http``,
office ``preview``), the verdict store (``annotations``), post-edits (``edits``), inter-annotator
``agreement`` and its ``report``, and ``apply`` (a new dataset from a reviewed one)."""
