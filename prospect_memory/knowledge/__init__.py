"""Knowledge search (SPEC 13): one question over everything an account knows."""
