# interpose/pystack/pystack.mk: the Python stack behind a selected launch or framework op
# (KTRACE_PYSTACK, PYSTACK records): selecting and arming (pystack.c), CPython found at run
# time with dlsym and the profile function the Python start-up hook installs (python_api.c).
LIB_SRCS += interpose/pystack/pystack.c interpose/pystack/python_api.c
