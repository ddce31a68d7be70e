from outreach.selectors import member_for_request, memberships_for_user


def kit_account(request):
    """The signed-in user's seats and the one they act in, for the account switcher."""
    user = getattr(request, "user", None)
    if not user or not user.is_authenticated:
        return {}
    memberships = memberships_for_user(user)
    current = member_for_request(request)
    return {"kit_memberships": memberships, "kit_member": current}
