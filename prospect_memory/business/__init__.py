"""Business memory (SPEC section 12): the account's shared knowledge and each member's own
context over it. An app nested in ``prospect_memory`` with its own label
(``business_memory``), using the shared ``prospect_memory.core`` and nothing of the notes."""
