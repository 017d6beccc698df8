-- wake: pass a wake-up token on to the next waiter (a waiter that took one but gave up).
push_wake()
return 1
