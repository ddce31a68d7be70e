from outreach.selectors import member_for_request, memberships_for_user


def kit_account(request):
    """The signed-in user's seats and the one they act in, for the account switcher."""
    user = getattr(request, "user", None)
    if not user or not user.is_authenticated:
        return {}
    memberships = memberships_for_user(user)
    # The seat a page acts in, as its decorator read it (from the primary); else read now.
    actor = getattr(request, "actor", None)
    current = actor.member if actor is not None else member_for_request(request)
    return {"kit_memberships": memberships, "kit_member": current}
