"""from-trace: one recorded run read into a job, a draft design, its points and a cassette (spec/FROM_TRACE.md)."""
