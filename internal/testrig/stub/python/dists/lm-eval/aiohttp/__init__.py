# stub: part of lm-eval[api]
