"""vLLM v1 KV connector (``pegaflow_jvm_pd.connector.PdConnector``) and P/D proxy (``python -m pegaflow_jvm_pd.proxy``)
for pega-server's P/D push. docs/pd-push.md, "Serving with vLLM", says how to run them."""
