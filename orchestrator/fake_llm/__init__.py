"""The fake endpoint's responders: every role prompt of this project answered the way the offline
backend would (:mod:`orchestrator.fake_llm.offline_responder`), and the oracle, none and noisy
agents. The endpoint itself (server, wire format, profiles) is :mod:`backends.fake_llm`."""
