"""The course: the attach journey taught over the lab's own traces.

It sits above the services (beside :mod:`ministack_audit`) because it is
built on their semantics (volumes, attachments, BDMs, the seed's steps);
:mod:`ministack.trace` below it records and reads the traces and knows
nothing of it.

* :mod:`ministack_course.web` - the journey page (``/trace/<id>``), one
  stored trace drawn as the seed's diagram;
* :mod:`ministack_course.lanes`, :mod:`ministack_course.listing` - the
  page's lanes and its list of recent traces;
* :mod:`ministack_course.course` - what the seed says of each step;
* :mod:`ministack_course.state` - what each hop left behind, and which
  hops are a failure's recovery;
* :mod:`ministack_course.quiz` - the seed's "Check yourself", answered
  from a trace;
* :mod:`ministack_course.server` - the ``ministack-course`` daemon that
  serves the page;
* :mod:`ministack_course.trace_cmd` - ``ministack-trace show``, the hop
  table with a failed attach's recovery steps.
"""
